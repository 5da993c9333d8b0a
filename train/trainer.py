"""The training loop: the paper's recipe (section 5), resumable, one process per GPU under torchrun.

Adam(beta1=0.9, beta2=0.98, eps=1e-9)
lr = lr_scale * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)      (train/schedule.py)
loss = cross-entropy with label smoothing, over real (non-pad) target tokens (train/loss.py)

What the run settles first is in train/start.py, checkpoints in train/checkpoints.py, validation
in train/validation.py, the batches in train/loader.py, the final model in train/final_model.py.
"""

from __future__ import annotations

import time

import torch
from torch.nn.parallel import DistributedDataParallel
from torch.profiler import record_function as phase
from tqdm import tqdm

from core.files.model_dir import RunDir
from core.model.transformer import Transformer
from train import checkpoints
from train.augment import Augmentation
from train.compiled import compile_layers, warm_up
from train.config import TrainConfig
from train.distributed import Distributed
from train.epoch import LogWindow, epoch_loader
from train.final_model import export
from train.hardware import DTYPES, FastPaths
from train.loader import Batch, loader_workers, to_device
from train.loss import TranslationLoss
from train.run_folder import check_run_folder, claim_run_folder
from train.schedule import learning_rate
from train.start import autocast_for, measure_dtypes, pick_dtype, start_run, tidy_run_dir
from train.validation import Validator


class Trainer:
    def __init__(self, config: TrainConfig) -> None:
        self.started, self.seconds_to_first_step = time.perf_counter(), None
        self.config, self.run_dir = config, RunDir(config.run_dir)
        check_run_folder(self.run_dir.path)  # before anything is written, in every process
        self.dist = Distributed(config.device)
        self.device, self.fast_paths = self.dist.device, FastPaths.for_device(self.dist.device)
        if self.dist.main:
            claim_run_folder(self.run_dir.path)
            tidy_run_dir(self.run_dir, config.fresh, self.log)
        self.dist.barrier()
        start = start_run(config, self.dist, self.log)
        self.corpus, self.tokenizer, self.origin = start.corpus, start.tokenizer, start.origin
        self.model, self.model_config = start.model, start.model.config
        self.fast_paths.apply(self.model)
        self.augmentation = Augmentation(
            config.concat_fraction, config.copy_fraction, config.number_copies,
            config.spelling_fraction,
        )  # fmt: skip
        self.pairs_of_epoch, self.base_pairs, self.loader = -1, None, None
        self.optimizer = torch.optim.Adam(
            self.model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9, fused=True
        )
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, self.learning_rate)
        self.step, self.epoch, self.batch_in_epoch, self.train_seconds = 0, 0, 0, 0.0
        chunk_rows = self.fast_paths.loss_chunk_rows
        self.dtype, self.dtype_seconds, note = pick_dtype(
            config,
            checkpoints.resume(self),
            lambda: measure_dtypes(self.model, config, self.dist, chunk_rows),
        )
        self.log(f"compute type: {self.dtype} ({note})")
        self.forward = TranslationLoss(
            self.model, config.label_smoothing, DTYPES[self.dtype], chunk_rows
        )
        if config.compile and not chunk_rows:  # the GPU's loss, over all the logits
            self.forward.compile_logits_loss()
        if self.dist.world_size > 1:
            device_ids = None if self.device.type == "cpu" else [self.device]
            self.forward = DistributedDataParallel(self.forward, device_ids=device_ids)
        self.compile_seconds = 0.0
        if config.compile:
            compile_layers(self.model)
        self.workers = loader_workers(config.loader_workers, self.device, self.dist.world_size)
        self.validator = Validator(
            config, self.corpus.valid, self.tokenizer, self.autocast, self.log
        )

    def autocast(self):
        return autocast_for(self.dtype, self.device)

    def learning_rate(self, scheduler_step: int) -> float:
        steps_before = self.origin.steps if self.origin else 0
        return learning_rate(
            scheduler_step + 1, self.model_config.d_model, self.config, steps_before
        )

    # -- logging -------------------------------------------------------------------------------

    def log(self, message: str) -> None:
        if self.dist.main:
            tqdm.write(message)

    def record(self, **metrics) -> None:
        """Append one line to metrics.jsonl (the app plots it)."""
        if self.dist.main:
            self.run_dir.append_metrics({"step": self.step, **metrics})

    def log_window(self, window: LogWindow, progress: tqdm) -> None:
        """A metrics line, and the progress bar's numbers, for the steps since the last line."""
        tokens_per_s = self.dist.world_size * window.tokens / window.seconds
        loss, lr = float(window.loss) / window.steps, self.scheduler.get_last_lr()[0]
        time_left = self.config.max_minutes - self.train_seconds / 60
        left = {"time_left": f"{time_left:.0f}min"} if self.config.max_minutes else {}
        progress.set_postfix(
            loss=f"{loss:.3f}", tok_s=f"{tokens_per_s:,.0f}", lr=f"{lr:.2e}", **left
        )
        self.record(
            elapsed_s=round(self.train_seconds, 1),
            train_loss=round(loss, 4),
            lr=lr,
            tokens_per_s=round(tokens_per_s),
        )

    # -- training ------------------------------------------------------------------------------

    def out_of_time(self) -> bool:
        """Whether --max-minutes of training have passed, or the wall clock reached --stop-at;
        with several processes asked only at a logged step (the processes agree by a collective,
        which waits for the GPU: all stop when one is over)."""
        limit, stop_at = self.config.max_minutes * 60, self.config.stop_at
        between_logs = self.dist.world_size > 1 and self.step % self.config.log_every
        if not (limit or stop_at) or between_logs:
            return False
        over = (limit and self.train_seconds >= limit) or (stop_at and time.time() >= stop_at)
        return self.dist.mean(float(bool(over))) > 0

    def train_step(self, batch: Batch) -> tuple[torch.Tensor, int]:
        """One update; the loss per token stays on the device (reading it would wait for it)."""
        with phase("step: copy"):  # the phases' names are for torch.profiler
            source, target_in, target_out = to_device(batch, self.device)
        with phase("step: forward"), self.autocast():
            loss = self.forward(source, target_in, target_out) / batch.n_tokens
        with phase("step: backward"):
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
        with phase("step: optimizer"):
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.clip)
            self.optimizer.step()
            self.scheduler.step()
        return loss.detach(), batch.n_tokens

    def pauses_after(self, step: int) -> bool:
        """Whether the loop logs, saves or validates after ``step``."""
        config = self.config
        every = (config.log_every, config.checkpoint_every, config.eval_every)
        return any(step % n == 0 for n in every) or step in config.snapshot_step_set

    def after_step(self, window: LogWindow, progress: tqdm) -> LogWindow:
        """Log, save and validate as this step asks; the window of steps since the last log."""
        config, step = self.config, self.step
        if step % config.log_every == 0:
            self.log_window(window, progress)
            window = LogWindow()
        if step % config.checkpoint_every == 0:
            checkpoints.save_checkpoint(self)
        if step in config.snapshot_step_set:
            checkpoints.save_snapshot(self)
        if step % config.eval_every == 0:
            self.validate(self.model)
            self.model.train()
        return window

    def run(self):
        config = self.config
        self.log(f"data: {'; '.join(self.corpus.notes)}")
        self.log(
            f"{self.augmentation}, subword alpha {config.subword_alpha} on {config.subword_sides}; "
            f"{len(self.corpus.valid)} validation pairs; vocabulary {len(self.tokenizer)}, "
            f"{self.model.num_parameters():,} parameters; device {self.device}, "
            f"{self.dist.world_size} process(es), {self.workers} loader worker(s); "
            f"{self.fast_paths}"
        )
        progress = tqdm(
            total=config.max_steps, initial=self.step, disable=not self.dist.main, unit="step",
            dynamic_ncols=True,
        )  # fmt: skip
        checkpoints.catch_up(self)
        self.model.train()
        if config.compile:
            self.compile_seconds = warm_up(self, self.log)
        window = LogWindow()
        while self.step < config.max_steps and not self.out_of_time():
            loader, last = epoch_loader(self), time.perf_counter()
            for batch in loader:
                loss, n_tokens = self.train_step(batch)
                self.step += 1
                self.batch_in_epoch += 1
                pause = self.pauses_after(self.step)
                if pause:  # the GPU's queued work is this step's, not the pause's
                    self.dist.synchronize()
                now = time.perf_counter()
                if self.seconds_to_first_step is None:
                    self.seconds_to_first_step = now - self.started
                seconds = now - last
                self.train_seconds += seconds
                window.add(loss, n_tokens, seconds)
                progress.update()
                if pause:
                    window = self.after_step(window, progress)
                last = time.perf_counter()
                if self.step >= config.max_steps or self.out_of_time():
                    break
            else:
                self.epoch += 1
                self.batch_in_epoch = 0
        progress.close()
        if self.run_dir.checkpoint_files()[-1:] != [self.run_dir.checkpoint_file(self.step)]:
            checkpoints.save_checkpoint(self)  # the last step, unless the loop just saved it
        self.dist.barrier()
        final_dir = export(self) if self.dist.main else None
        self.dist.barrier()  # the others wait for the export, then leave together
        self.dist.close()
        return final_dir

    def validate(self, model: Transformer) -> dict:
        """The validator's scores, recorded; the other processes wait at a barrier meanwhile.
        Compiled layers run as written here (beam search's shapes change at every step)."""
        result = {}
        if self.dist.main:
            with torch.compiler.set_stance("force_eager"):
                result = self.validator.scores(model, self.step)
            self.record(**result)
        self.dist.barrier()
        return result
