"""The training loop: the paper's recipe (section 5), resumable, one process per GPU under torchrun.

Adam(beta1=0.9, beta2=0.98, eps=1e-9)
lr = lr_scale * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)      (train/loop/schedule.py)
loss = cross-entropy with label smoothing, over real (non-pad) target tokens (train/loop/loss.py)

What the run settles first is in train/loop/start.py, checkpoints in train/loop/checkpoints.py,
validation in train/loop/validation.py, the epochs' batches in train/loop/epoch.py, the final model
in train/loop/final_model.py. Those parts take the run's state (train/loop/state.py) and return
values; the Trainer alone changes it.
"""

from __future__ import annotations

import time

import torch
from torch.nn.parallel import DistributedDataParallel
from torch.profiler import record_function as phase
from tqdm import tqdm

from core.model.transformer import Transformer
from train.data.augment import Augmentation
from train.data.loader import Batch, loader_workers, to_device
from train.loop import checkpoints
from train.loop.compiled import compile_layers, warm_up
from train.loop.config import TrainConfig
from train.loop.distributed import Distributed
from train.loop.epoch import Epochs, LogWindow
from train.loop.final_model import RunFacts, export
from train.loop.hardware import DTYPES, FastPaths
from train.loop.loss import TranslationLoss
from train.loop.run_folder import RunDir, check_run_folder, claim_run_folder
from train.loop.schedule import learning_rate
from train.loop.start import autocast_for, measure_dtypes, pick_dtype, start_run, tidy_run_dir
from train.loop.state import Learner, TrainState
from train.loop.validation import Validator


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
        self.start = start = start_run(config, self.dist, self.log)
        self.corpus, self.tokenizer, self.origin = start.corpus, start.tokenizer, start.origin
        self.model, self.model_config = start.model, start.model.config
        self.fast_paths.apply(self.model)
        self.augmentation = Augmentation(
            config.concat_fraction, config.copy_fraction, config.number_copies,
            config.spelling_fraction,
        )  # fmt: skip
        self.optimizer = torch.optim.Adam(
            self.model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9, fused=True
        )
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, self.learning_rate)
        self.learner = Learner(self.model, self.optimizer, self.scheduler)
        resumed = checkpoints.resume(
            self.run_dir, self.learner, config, self.device, self.dist.main, self.log
        )
        self.state = resumed.state if resumed else TrainState()
        chunk_rows = self.fast_paths.loss_chunk_rows
        self.dtype, self.dtype_seconds, note = pick_dtype(
            config,
            resumed.dtype if resumed else None,
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
        self.epochs = Epochs(
            config, self.corpus, self.tokenizer, self.augmentation, self.model_config.max_len,
            self.run_dir, self.dist, self.workers, self.log,
        )  # fmt: skip
        self.validator = Validator(
            config, self.corpus.valid, self.tokenizer, self.autocast, self.log
        )

    def autocast(self):
        return autocast_for(self.dtype, self.device)

    def summed_loss(
        self, source: torch.Tensor, target_in: torch.Tensor, target_out: torch.Tensor
    ) -> torch.Tensor:
        """The batch's loss summed over its target tokens, in the run's compute type."""
        with self.autocast():
            return self.forward(source, target_in, target_out)

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
            self.run_dir.append_metrics({"step": self.state.step, **metrics})

    def log_window(self, window: LogWindow, progress: tqdm) -> None:
        """A metrics line, and the progress bar's numbers, for the steps since the last line."""
        tokens_per_s = self.dist.world_size * window.tokens / window.seconds
        loss, lr = float(window.loss) / window.steps, self.scheduler.get_last_lr()[0]
        time_left = self.config.max_minutes - self.state.train_seconds / 60
        left = {"time_left": f"{time_left:.0f}min"} if self.config.max_minutes else {}
        progress.set_postfix(
            loss=f"{loss:.3f}", tok_s=f"{tokens_per_s:,.0f}", lr=f"{lr:.2e}", **left
        )
        self.record(
            elapsed_s=round(self.state.train_seconds, 1),
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
        between_logs = self.dist.world_size > 1 and self.state.step % self.config.log_every
        if not (limit or stop_at) or between_logs:
            return False
        seconds = self.state.train_seconds
        over = (limit and seconds >= limit) or (stop_at and time.time() >= stop_at)
        return self.dist.mean(float(bool(over))) > 0

    def train_step(self, batch: Batch) -> tuple[torch.Tensor, int]:
        """One update; the loss per token stays on the device (reading it would wait for it)."""
        with phase("step: copy"):  # the phases' names are for torch.profiler
            source, target_in, target_out = to_device(batch, self.device)
        with phase("step: forward"):
            loss = self.summed_loss(source, target_in, target_out) / batch.n_tokens
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
        config, step = self.config, self.state.step
        if step % config.log_every == 0:
            self.log_window(window, progress)
            window = LogWindow()
        if step % config.checkpoint_every == 0:
            self.save_checkpoint()
        if step in config.snapshot_step_set:
            self.save_snapshot()
        if step % config.eval_every == 0:
            self.validate(self.model)
            self.model.train()
        return window

    def run(self):
        config, state = self.config, self.state
        self.log(f"data: {'; '.join(self.corpus.notes)}")
        self.log(
            f"{self.augmentation}, subword alpha {config.subword_alpha} on {config.subword_sides}; "
            f"{len(self.corpus.valid)} validation pairs; vocabulary {len(self.tokenizer)}, "
            f"{self.model.num_parameters():,} parameters; device {self.device}, "
            f"{self.dist.world_size} process(es), {self.workers} loader worker(s); "
            f"{self.fast_paths}"
        )
        progress = tqdm(
            total=config.max_steps, initial=state.step, disable=not self.dist.main, unit="step",
            dynamic_ncols=True,
        )  # fmt: skip
        self.catch_up()
        self.model.train()
        if config.compile:
            self.compile_seconds = warm_up(
                self.summed_loss, self.model, config, self.dist, self.log
            )
        window = LogWindow()
        while state.step < config.max_steps and not self.out_of_time():
            loader = self.epochs.loader_from(state.epoch, state.batch_in_epoch)
            last = time.perf_counter()
            for batch in loader:
                loss, n_tokens = self.train_step(batch)
                state.step += 1
                state.batch_in_epoch += 1
                pause = self.pauses_after(state.step)
                if pause:  # the GPU's queued work is this step's, not the pause's
                    self.dist.synchronize()
                now = time.perf_counter()
                if self.seconds_to_first_step is None:
                    self.seconds_to_first_step = now - self.started
                seconds = now - last
                state.train_seconds += seconds
                window.add(loss, n_tokens, seconds)
                progress.update()
                if pause:
                    window = self.after_step(window, progress)
                last = time.perf_counter()
                if state.step >= config.max_steps or self.out_of_time():
                    break
            else:
                state.epoch += 1
                state.batch_in_epoch = 0
        progress.close()
        return self.finish()

    def finish(self):
        """The last checkpoint (unless the loop just saved it) and the final model; its folder in
        the main process, None in the others."""
        if self.run_dir.checkpoint_files()[-1:] != [self.run_dir.checkpoint_file(self.state.step)]:
            self.save_checkpoint()
        self.dist.barrier()
        final_dir = self.export() if self.dist.main else None
        self.dist.barrier()  # the others wait for the export, then leave together
        self.dist.close()
        return final_dir

    # -- the run's records ---------------------------------------------------------------------

    def save_checkpoint(self) -> None:
        if self.dist.main:
            checkpoints.save_checkpoint(
                self.run_dir, self.learner, self.state, self.dtype, self.config, self.device
            )

    def save_snapshot(self) -> None:
        if self.dist.main:
            checkpoints.save_snapshot(self.run_dir, self.model, self.state)

    def catch_up(self) -> None:
        """What a run killed right after its last checkpoint still owed at that step."""
        snapshot, validation = checkpoints.owed_at_resume(
            self.run_dir, self.state.step, self.config
        )
        if snapshot:
            self.save_snapshot()
        if validation:
            self.validate(self.model)

    def validate(self, model: Transformer) -> dict:
        """The validator's scores, recorded; the other processes wait at a barrier meanwhile.
        Compiled layers run as written here (beam search's shapes change at every step)."""
        result = {}
        if self.dist.main:
            with torch.compiler.set_stance("force_eager"):
                result = self.validator.scores(model, self.state.step)
            self.record(**result)
        self.dist.barrier()
        return result

    def export(self):
        """The final model (train/loop/final_model.py), validated and recorded as it is written."""

        def validate(model: Transformer) -> dict:
            scores = self.validator.scores(model, self.state.step)
            self.record(**scores)
            return scores

        facts = RunFacts(
            self.device, self.dist.world_size, self.fast_paths, self.dtype, self.dtype_seconds,
            self.compile_seconds, self.seconds_to_first_step,
        )  # fmt: skip
        return export(self.run_dir, self.config, self.state, facts, self.start, validate, self.log)
