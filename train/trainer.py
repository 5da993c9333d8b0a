"""The training loop: the paper's recipe (section 5), resumable, one process per GPU under torchrun.

Adam(beta1=0.9, beta2=0.98, eps=1e-9)
lr = lr_scale * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)
loss = cross-entropy with label smoothing, over real (non-pad) target tokens
"""

from __future__ import annotations

import dataclasses
import os
import random
import time
from collections.abc import Callable
from contextlib import nullcontext
from pathlib import Path

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from tqdm import tqdm

from core.files.checkpoint import (
    CheckpointError,
    atomic_save,
    interrupted_writes,
    safe_load,
    save_model,
)
from core.files.model_dir import RunDir, copy_vocabulary, open_model_dir
from core.model.config import ModelConfig
from core.model.transformer import Transformer
from core.scoring import score_translations
from core.text.tokenizer import PAD_ID, Tokenizer
from core.text.truecase import Truecaser
from core.translator import Translator
from train.augment import Augmentation, epoch_examples
from train.batching import collate, encode_examples, token_batches
from train.config import TrainConfig
from train.data import Corpus, load_corpus, parse_mixture
from train.hardware import DECISIVE_RATIO, DTYPES, best_seconds, choose_dtype
from train.lineage import Origin, ship_history
from train.loss import TranslationLoss, label_smoothed_loss

PROBE_LENGTH = 25  # pieces per row of the synthetic batch that --dtype auto times


def noam_lr(step: int, d_model: int, warmup: int, scale: float = 1.0) -> float:
    """The paper's schedule (eq. 3): linear warm-up, then decay with the inverse square root."""
    step = max(step, 1)
    return scale * d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


class ResumeConflict(Exception):
    """The run folder holds a run that these flags cannot continue."""


class Distributed:
    """Rank and world size under torchrun (WORLD_SIZE > 1), or a single process."""

    def __init__(self) -> None:
        self.world_size = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        if torch.cuda.is_available():
            self.device = torch.device("cuda", local_rank)
            torch.cuda.set_device(self.device)
        else:
            self.device = torch.device("cpu")
        if self.world_size > 1:
            dist.init_process_group("nccl" if self.device.type == "cuda" else "gloo")

    @property
    def main(self) -> bool:
        return self.rank == 0

    def mean(self, value: float) -> float:
        if self.world_size == 1:
            return value
        tensor = torch.tensor([value], device=self.device)
        dist.all_reduce(tensor)
        return tensor.item() / self.world_size

    def barrier(self) -> None:
        if self.world_size > 1:
            dist.barrier()

    def close(self) -> None:
        if self.world_size > 1:
            dist.destroy_process_group()


def continued_lr(step: int, d_model: int, config: TrainConfig, steps_before: int) -> float:
    """The schedule of a run continued from a trained model (--init-from): the paper's schedule
    goes on from the step where that model stopped, reached by a short linear warm-up, since the
    fresh Adam has no moment estimates yet.

    lr = min(1, step / init_warmup) * noam(steps_before + step)
    """
    ramp = min(1.0, max(step, 1) / max(config.init_warmup, 1))
    return ramp * noam_lr(steps_before + step, d_model, config.warmup, config.lr_scale)


def cooldown(step: int, max_steps: int, cooldown_steps: int) -> float:
    """The factor on the learning rate in the decay phase (--cooldown-steps): 1 until the last
    cooldown_steps steps, then linearly down to 0 at max_steps."""
    if cooldown_steps <= 0:
        return 1.0
    return min(1.0, max(0.0, (max_steps - step) / cooldown_steps))


def prepare_tokenizer(config: TrainConfig, corpus: Corpus) -> Tokenizer:
    """Train the shared SentencePiece model on the training split once; reuse it on resume. A run
    continued from a trained model keeps that model's vocabulary, truecaser included. With
    --truecase, a vocabulary without a truecaser gets one learnt from the English sources."""
    run = RunDir(config.run_dir)
    if config.init_from and not run.tokenizer_file.is_file():
        copy_vocabulary(open_model_dir(config.init_from).tokenizer_file, run.tokenizer_file)
    if not run.tokenizer_file.is_file():
        learn_vocabulary(corpus, run.tokenizer_prefix, config.vocab_size)
    if config.truecase and not run.truecase_file.is_file():
        Truecaser.learn(sorted({e.source_text for e in corpus.train}), run.truecase_file)
    return run.load_tokenizer()


def learn_vocabulary(corpus: Corpus, prefix: Path, vocab_size: int) -> Tokenizer:
    """The shared SentencePiece model learnt on the training split's sentences."""
    texts = {e.source_text for e in corpus.train}
    texts |= {Tokenizer.target_text(e.target_text, e.target) for e in corpus.train}
    # a set: the vocabulary is learnt from each sentence once, whatever the mixture's repeats
    return Tokenizer.train(sorted(texts), prefix, vocab_size)


def average_checkpoints(paths: list[Path]) -> dict[str, torch.Tensor]:
    """Element-wise mean of the models in the last checkpoints (section 6.1: the last 5 or 20)."""
    total = None
    for path in paths:
        state = safe_load(path)["model"]
        if total is None:
            total = {k: v.double().clone() for k, v in state.items()}
        else:
            for k, v in state.items():
                total[k] += v.double()
    return {k: (v / len(paths)).float() for k, v in total.items()}


@dataclasses.dataclass
class LogWindow:
    """The steps since the last metrics line: their target tokens, summed loss and seconds."""

    tokens: int = 0
    loss: float = 0.0
    steps: int = 0
    seconds: float = 0.0

    def add(self, loss: float, tokens: int, seconds: float) -> None:
        self.tokens += tokens
        self.loss += loss
        self.steps += 1
        self.seconds += seconds


class Trainer:
    def __init__(self, config: TrainConfig) -> None:
        self.config = config
        self.run_dir = RunDir(config.run_dir)
        self.dist = Distributed()
        self.device = self.dist.device
        if self.dist.main:
            self.tidy_run_dir()
        self.dist.barrier()
        self.run_dir.path.mkdir(parents=True, exist_ok=True)
        torch.manual_seed(config.seed)
        random.seed(config.seed)

        self.corpus = load_corpus(
            Path(config.data_dir),
            limit=config.data_limit or None,
            mixture=parse_mixture(config.mixture),
        )
        if not self.corpus.train:
            raise SystemExit(f"no training data found in {config.data_dir}: {self.corpus.notes}")
        if self.dist.main:
            self.tokenizer = prepare_tokenizer(config, self.corpus)
        self.dist.barrier()
        self.tokenizer = self.run_dir.load_tokenizer()
        self.model_config = config.model_config(len(self.tokenizer))
        self.initial_state, self.origin = None, None
        if config.init_from:
            self.model_config, self.initial_state, self.origin = self.initial_model()
        self.augmentation = Augmentation(
            config.concat_fraction,
            config.copy_fraction,
            config.number_copies,
            config.spelling_fraction,
        )
        self.pairs_of_epoch = -1

        self.model = Transformer(self.model_config).to(self.device)
        if self.initial_state is not None:
            self.model.load_state_dict(self.initial_state)
        self.optimizer = torch.optim.Adam(
            self.model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9, fused=True
        )
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(
            self.optimizer,
            self.learning_rate,
        )
        self.step, self.epoch, self.batch_in_epoch, self.train_seconds = 0, 0, 0, 0.0
        self.resumed_dtype: str | None = None
        self.resume()
        self.dtype, self.dtype_seconds = self.pick_dtype()
        self.log(f"compute type: {self.dtype} ({self.dtype_note()})")
        self.forward = TranslationLoss(self.model, config.label_smoothing, DTYPES[self.dtype])
        if self.dist.world_size > 1:
            self.forward = DistributedDataParallel(
                self.forward, device_ids=None if self.device.type == "cpu" else [self.device]
            )
        if config.compile:
            self.forward = torch.compile(self.forward)
        self.autocast = self.autocast_for(self.dtype)

    def autocast_for(self, dtype: str):
        """bf16 autocast (tensor cores on a GPU, AMX or AVX-512 BF16 on a CPU), or plain float32."""
        if dtype == "bf16":
            return torch.autocast(self.device.type, dtype=torch.bfloat16)
        return nullcontext()

    def pick_dtype(self) -> tuple[str, dict[str, float]]:
        """--dtype bf16|fp32 as given; auto: the faster of the two on this machine, timed on a
        forward and backward pass of a synthetic batch of --max-tokens tokens (train/hardware.py).
        Every process takes the mean of the timings, so all of them choose alike; a resumed run
        keeps the type its checkpoint was trained in."""
        if self.config.dtype != "auto":
            return self.config.dtype, {}
        if self.resumed_dtype:  # a resumed run computes as the unbroken run would have
            return self.resumed_dtype, {}
        rows = max(1, self.config.max_tokens // PROBE_LENGTH)
        vocab = self.model_config.vocab_size
        with torch.random.fork_rng(devices=[]):  # the probe's draws leave the run's seed alone
            batch = torch.randint(4, vocab, (rows, PROBE_LENGTH), device=self.device)
            steps = {name: self.probe_step(name, batch) for name in DTYPES}
            seconds = best_seconds(steps, device=self.device.type, decisive=DECISIVE_RATIO)
        self.model.zero_grad(set_to_none=True)
        seconds = {name: self.dist.mean(value) for name, value in seconds.items()}
        return choose_dtype(seconds), seconds

    def probe_step(self, dtype: str, batch: torch.Tensor) -> Callable[[], None]:
        """A forward and backward pass over ``batch`` as source and target, in ``dtype``."""
        loss = TranslationLoss(self.model, self.config.label_smoothing, DTYPES[dtype])

        def step() -> None:
            with self.autocast_for(dtype):
                loss(batch, batch[:, :-1], batch[:, 1:]).backward()

        return step

    def dtype_note(self) -> str:
        if self.config.dtype != "auto":
            return "forced by --dtype"
        if not self.dtype_seconds:
            return "as measured when the run began, kept from its checkpoint"
        timings = ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in self.dtype_seconds.items())
        return f"measured per step: {timings}"

    def tidy_run_dir(self) -> None:
        """--fresh: delete what an earlier run in this folder wrote, vocabulary included, so that
        changed flags such as --vocab-size take effect. Always: delete the temporary files of
        writes that a kill interrupted (nothing else writes here while this run starts)."""
        if self.config.fresh:
            self.run_dir.remove_earlier_run()
        for stale in interrupted_writes(self.run_dir.path):
            stale.unlink()
            self.log(f"removed {stale}, left by an interrupted write")

    def learning_rate(self, scheduler_step: int) -> float:
        step, d_model, config = scheduler_step + 1, self.model_config.d_model, self.config
        decay = cooldown(step, config.max_steps, config.cooldown_steps)
        if config.init_from:
            return decay * continued_lr(step, d_model, config, self.origin.steps)
        return decay * noam_lr(step, d_model, config.warmup, config.lr_scale)

    def initial_model(self) -> tuple[ModelConfig, dict, Origin]:
        """--init-from DIR: that model's architecture, weights, training steps and seconds. The
        flags' architecture is ignored (the weights fix it); the flags' dropout applies."""
        model_dir = open_model_dir(self.config.init_from)
        model, _ = model_dir.load_model()
        training = model_dir.read_card().get("training", {})
        origin = Origin(
            model_dir,
            int(training.get("steps", 0)),
            training.get("seconds", 0.0),
            training.get("vocabulary_transfer"),
        )
        model_config = dataclasses.replace(model.config, dropout=self.config.dropout)
        self.log(
            f"initialised from {model_dir.path} ({origin.steps} steps before; "
            f"d_model {model_config.d_model}, vocabulary {model_config.vocab_size})"
        )
        return model_config, model.state_dict(), origin

    # -- checkpoints ---------------------------------------------------------------------------

    def save_checkpoint(self) -> None:
        """All it takes to continue exactly: weights, optimizer, schedule, data position, RNG."""
        if not self.dist.main:
            return
        atomic_save(
            {
                "model": self.model.state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "scheduler": self.scheduler.state_dict(),
                "step": self.step,
                "epoch": self.epoch,
                "batch_in_epoch": self.batch_in_epoch,
                "train_seconds": self.train_seconds,
                "dtype": self.dtype,
                "rng": {
                    "torch": torch.get_rng_state(),
                    "python": list(random.getstate()[1]),
                    "python_gauss": random.getstate()[2],
                },
                "model_config": dataclasses.asdict(self.model_config),
                "train_config": dataclasses.asdict(self.config),
            },
            self.run_dir.checkpoint_file(self.step),
        )
        for old in self.run_dir.checkpoint_files()[: -self.config.keep_checkpoints]:
            old.unlink()

    def snapshot_steps(self) -> set[int]:
        return {int(step) for step in self.config.snapshot_steps.split(",") if step.strip()}

    def save_snapshot(self) -> None:
        """A float16 copy of the model at this step, for watching attention being learned."""
        if self.dist.main:
            metadata = {"step": self.step, "train_seconds": self.train_seconds}
            save_model(self.model, self.run_dir.snapshot_file(self.step), metadata)

    def resume(self) -> None:
        """Continue from the newest readable checkpoint, if there is one."""
        found = self.newest_readable_checkpoint()
        if found is None:
            return
        path, state = found
        self.refuse_other_architecture(path, state)
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.step, self.epoch = state["step"], state["epoch"]
        self.batch_in_epoch, self.train_seconds = state["batch_in_epoch"], state["train_seconds"]
        self.resumed_dtype = state.get("dtype")  # checkpoints before --dtype auto have none
        torch.set_rng_state(state["rng"]["torch"])
        random.setstate((3, tuple(state["rng"]["python"]), state["rng"]["python_gauss"]))
        self.forget_metrics_after(self.step)
        self.log(f"resumed from {path} (step {self.step}, epoch {self.epoch})")

    def newest_readable_checkpoint(self) -> tuple[Path, dict] | None:
        """(path, contents) of the newest checkpoint that loads; a damaged one is skipped with a
        warning. None when there is no checkpoint; an error when none of them loads."""
        found = self.run_dir.checkpoint_files()
        for path in reversed(found):
            try:
                return path, safe_load(path)
            except CheckpointError as error:
                self.log(f"warning: skipping a damaged checkpoint: {error}")
        if found:
            raise CheckpointError(
                f"no readable checkpoint in {found[0].parent}: start over with --fresh"
            )
        return None

    def refuse_other_architecture(self, path: Path, state: dict) -> None:
        """Resuming with other architecture flags cannot work: say so, instead of a size mismatch
        deep in load_state_dict. Dropout may change; it is not part of the weights."""
        saved = {**state["model_config"], "dropout": self.model_config.dropout}
        wanted = dataclasses.asdict(self.model_config)
        if not self.config.init_from:  # a changed flag would silently keep the old vocabulary
            saved["--vocab-size"] = state["train_config"]["vocab_size"]
            wanted["--vocab-size"] = self.config.vocab_size
        changed = [f"{k} {saved[k]} -> {v}" for k, v in wanted.items() if saved.get(k) != v]
        if changed:
            raise ResumeConflict(
                f"{path} was trained with another architecture ({', '.join(changed)}): "
                f"start over with --fresh, or give another --out"
            )

    def catch_up(self) -> None:
        """What a run killed right after its last checkpoint still owed at that step: the snapshot
        and the validation that follow a checkpoint in the training loop."""
        if self.step == 0:
            return
        snapshot = self.run_dir.snapshot_file(self.step)
        if self.step in self.snapshot_steps() and not snapshot.exists():
            self.save_snapshot()
        if self.step % self.config.eval_every == 0 and not self.validated_at(self.step):
            self.validate(self.model)

    def validated_at(self, step: int) -> bool:
        records = self.run_dir.read_metrics()
        return any(r["step"] == step and "val_loss" in r for r in records)

    def forget_metrics_after(self, step: int) -> None:
        """Drop metrics lines a killed run wrote after its last checkpoint: they are redone."""
        if self.dist.main:
            self.run_dir.truncate_metrics(step)

    # -- logging -------------------------------------------------------------------------------

    def log(self, message: str) -> None:
        if self.dist.main:
            tqdm.write(message)

    def record(self, **metrics) -> None:
        """Append one line to metrics.jsonl (the app plots it)."""
        if self.dist.main:
            self.run_dir.append_metrics({"step": self.step, **metrics})

    # -- training ------------------------------------------------------------------------------

    def prepare_epoch(self) -> None:
        """This epoch's encoded pairs: the corpus as it is, or with this epoch's augmentation
        (train/augment.py), drawn from the epoch's seed, so that a resumed run and every process
        of a distributed one draw the same."""
        if self.pairs_of_epoch == self.epoch:
            return
        seed = self.config.seed + self.epoch
        examples = epoch_examples(self.corpus.train, self.augmentation, seed)
        self.train_pairs = encode_examples(
            self.tokenizer,
            examples,
            self.model_config.max_len,
            self.config.subword_alpha,
            seed,
            self.config.subword_sides,
        )
        self.lengths = [(len(s), len(t)) for s, t in self.train_pairs]
        self.pairs_of_epoch = self.epoch

    def epoch_batches(self) -> list[list[int]]:
        """This epoch's batches for this rank; every rank gets the same count."""
        self.prepare_epoch()
        batches = token_batches(self.lengths, self.config.max_tokens, self.config.seed + self.epoch)
        usable = len(batches) - len(batches) % self.dist.world_size
        return batches[self.dist.rank : usable : self.dist.world_size]

    def time_left(self) -> dict:
        """For the progress bar: a time-limited run ends before max_steps, so its ETA misleads."""
        if not self.config.max_minutes:
            return {}
        return {"time_left": f"{self.config.max_minutes - self.train_seconds / 60:.0f}min"}

    def out_of_time(self) -> bool:
        limit = self.config.max_minutes * 60
        return bool(limit) and self.dist.mean(self.train_seconds) >= limit

    def train_step(self, batch: list[int]) -> tuple[float, int]:
        source, target_in, target_out = (
            t.to(self.device) for t in collate([self.train_pairs[i] for i in batch])
        )
        n_tokens = int((target_out != PAD_ID).sum())
        with self.autocast:
            loss = self.forward(source, target_in, target_out) / n_tokens
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.config.clip)
        self.optimizer.step()
        self.scheduler.step()
        return loss.item(), n_tokens

    def run(self) -> Path | None:
        config = self.config
        self.prepare_epoch()
        self.log(f"data: {'; '.join(self.corpus.notes)}")
        self.log(
            f"{len(self.train_pairs)} training pairs in epoch {self.epoch} ({self.augmentation}, "
            f"subword alpha {config.subword_alpha} on {config.subword_sides}), "
            f"{len(self.corpus.valid)} validation pairs, "
            f"vocabulary {len(self.tokenizer)}, {self.model.num_parameters():,} parameters, "
            f"device {self.device}, {self.dist.world_size} process(es)"
        )
        progress = tqdm(
            total=config.max_steps,
            initial=self.step,
            disable=not self.dist.main,
            unit="step",
            dynamic_ncols=True,
        )
        window = LogWindow()
        self.catch_up()
        self.model.train()
        snapshot_steps = self.snapshot_steps()
        while self.step < config.max_steps and not self.out_of_time():
            batches = self.epoch_batches()
            for batch in batches[self.batch_in_epoch :]:
                started = time.perf_counter()
                loss, n_tokens = self.train_step(batch)
                seconds = time.perf_counter() - started
                self.train_seconds += seconds
                self.step += 1
                self.batch_in_epoch += 1
                window.add(loss, n_tokens, seconds)
                progress.update()
                if self.step % config.log_every == 0:
                    self.log_window(window, progress)
                    window = LogWindow()
                if self.step % config.checkpoint_every == 0:
                    self.save_checkpoint()
                if self.step in snapshot_steps:
                    self.save_snapshot()
                if self.step % config.eval_every == 0:
                    self.validate(self.model)
                    self.model.train()
                if self.step >= config.max_steps or self.out_of_time():
                    break
            else:
                self.epoch += 1
                self.batch_in_epoch = 0
        progress.close()
        if self.run_dir.checkpoint_files()[-1:] != [self.run_dir.checkpoint_file(self.step)]:
            self.save_checkpoint()  # the last step, unless the loop just saved it
        self.dist.barrier()
        final_dir = None
        if self.dist.main:
            final_dir = self.export()
        self.dist.close()
        return final_dir

    def log_window(self, window: LogWindow, progress: tqdm) -> None:
        """A metrics line, and the progress bar's numbers, for the steps since the last line.
        Tokens/s counts the training steps' own time, as elapsed_s does: validation and
        checkpoints in between are not training."""
        tokens_per_s = self.dist.world_size * window.tokens / window.seconds
        lr = self.scheduler.get_last_lr()[0]
        progress.set_postfix(
            loss=f"{window.loss / window.steps:.3f}",
            tok_s=f"{tokens_per_s:,.0f}",
            lr=f"{lr:.2e}",
            **self.time_left(),
        )
        self.record(
            elapsed_s=round(self.train_seconds, 1),
            train_loss=round(window.loss / window.steps, 4),
            lr=lr,
            tokens_per_s=round(tokens_per_s),
        )

    # -- validation and the final model ---------------------------------------------------------

    @torch.no_grad()
    def validation_loss(self, model: Transformer, limit: int = 2000) -> float:
        pairs = encode_examples(
            self.tokenizer, self.corpus.valid[:limit], self.model_config.max_len
        )
        total, tokens = 0.0, 0
        for batch in token_batches([(len(s), len(t)) for s, t in pairs], self.config.max_tokens, 0):
            source, target_in, target_out = (
                t.to(self.device) for t in collate([pairs[i] for i in batch])
            )
            with self.autocast:
                logits, _ = model(source, target_in)
            total += label_smoothed_loss(logits, target_out, 0.0, PAD_ID).item()
            tokens += int((target_out != PAD_ID).sum())
        return total / max(tokens, 1)

    def validation_sample(self, target: str) -> tuple[list[str], list[str]]:
        """A fixed, spread-out sample of validation sentences for BLEU (every k-th example)."""
        examples = [e for e in self.corpus.valid if e.target == target]
        step = max(1, len(examples) // max(self.config.valid_sentences, 1))
        chosen = examples[::step][: self.config.valid_sentences]
        return [e.source_text for e in chosen], [e.target_text for e in chosen]

    def validate(self, model: Transformer) -> dict:
        """Validation loss, and sacreBLEU/chrF by beam search on a sample, with signatures."""
        if not self.dist.main:
            return {}
        model.eval()
        translator = Translator(model, self.tokenizer)
        result = {"val_loss": round(self.validation_loss(model), 4)}
        for target in sorted({e.target for e in self.corpus.valid}):
            sources, references = self.validation_sample(target)
            hypotheses = translator.translate_batch(
                sources, target, beam_size=self.config.beam_size
            )
            scores = score_translations(hypotheses, references)
            result[f"val_bleu_{target}"], result[f"val_chrf_{target}"] = (
                scores["bleu"],
                scores["chrf"],
            )
            self.log(
                f"step {self.step} en-{target}: BLEU {scores['bleu']:.1f} "
                f"chrF {scores['chrf']:.1f} "
                f"on {len(sources)} validation sentences [{scores['signature']}]"
            )
        bleus = [v for k, v in result.items() if k.startswith("val_bleu_")]
        chrfs = [v for k, v in result.items() if k.startswith("val_chrf_")]
        result["val_bleu"] = round(sum(bleus) / len(bleus), 2) if bleus else None
        result["val_chrf"] = round(sum(chrfs) / len(chrfs), 2) if chrfs else None
        self.record(**result)
        return result

    def export(self) -> Path:
        """Average the last checkpoints into the final model, validate it, write run/model/."""
        paths = self.run_dir.checkpoint_files()[-self.config.average_last :]
        model = Transformer(self.model_config)
        model.load_state_dict(average_checkpoints(paths))
        model.to(self.device)
        self.log(
            f"final model: average of {len(paths)} checkpoints "
            f"({paths[0].name} .. {paths[-1].name})"
        )
        scores = self.validate(model)
        steps_before, seconds_before = (
            (self.origin.steps, self.origin.seconds) if self.origin else (0, 0)
        )
        training = {
            "preset": self.config.preset,
            "steps": steps_before + self.step,
            "seconds": round(seconds_before + self.train_seconds),
            "hardware": describe_hardware(self.device, self.dist.world_size),
            "dtype": self.dtype,
            "dtype_seconds": {k: round(v, 4) for k, v in self.dtype_seconds.items()},
            "averaged_checkpoints": [p.name for p in paths],
            "initialised_from": self.config.init_from or None,
            "steps_before": steps_before,
            "vocabulary_transfer": self.origin.vocabulary_transfer if self.origin else None,
            "validation": scores,
            "train_config": dataclasses.asdict(self.config),
        }
        final = self.run_dir.model_dir.write(
            model.cpu(),
            self.tokenizer.model_file,
            {"name": self.run_dir.path.name, "training": training},
        )
        ship_history(self.run_dir, final, self.origin)
        self.log(f"wrote {final.path}")
        return final.path


def describe_hardware(device: torch.device, world_size: int) -> str:
    if device.type == "cuda":
        return f"{world_size} x {torch.cuda.get_device_name(device)}"
    threads = torch.get_num_threads()
    return f"CPU, {threads} thread{'s' if threads > 1 else ''}"
