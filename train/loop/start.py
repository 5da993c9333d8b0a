"""What a run settles before its first step: the vocabulary, the model it starts from, and the
compute type it trains in."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable
from contextlib import nullcontext

import torch

from core.files.checkpoint import interrupted_writes
from core.files.model_dir import copy_vocabulary, open_model_dir
from core.model.config import ModelConfig
from core.model.transformer import Transformer
from core.text.tokenizer import Tokenizer
from core.text.truecase import Truecaser
from train.data.corpora import Corpus, load_corpus, parse_mixture
from train.loop.config import TrainConfig
from train.loop.distributed import Distributed
from train.loop.hardware import DECISIVE_RATIO, DTYPES, best_seconds, choose_dtype
from train.loop.lineage import Origin
from train.loop.loss import TranslationLoss
from train.loop.run_folder import RunDir

PROBE_LENGTH = 25  # pieces per row of the synthetic batch that --dtype auto times


@dataclasses.dataclass
class Start:
    """What a run trains on and from: the corpus, the vocabulary, the model (on its device)."""

    corpus: Corpus
    tokenizer: Tokenizer
    model: Transformer
    origin: Origin | None  # the model a continued run (--init-from) began from


def tidy_run_dir(run_dir: RunDir, fresh: bool, log: Callable[[str], None]) -> None:
    """--fresh: delete what an earlier run in this folder wrote, vocabulary included, so that
    changed flags such as --vocab-size take effect. Always: delete the temporary files of
    writes that a kill interrupted (nothing else writes here while this run starts)."""
    if fresh:
        run_dir.remove_earlier_run()
    for stale in interrupted_writes(run_dir.path):
        stale.unlink()
        log(f"removed {stale}, left by an interrupted write")


def start_run(config: TrainConfig, dist: Distributed, log: Callable[[str], None]) -> Start:
    """Seed, read the corpora, settle the vocabulary (the main process learns or copies it, the
    others wait) and build the model: fresh, or --init-from's."""
    torch.manual_seed(config.seed)
    random.seed(config.seed)
    mixture, limit = parse_mixture(config.mixture), config.data_limit or None
    corpus = load_corpus(
        config.data_dir_path,
        limit=limit,
        mixture=mixture,
        hansard_tag=config.hansard_tag,
        hansard_clean=config.hansard_clean,
    )
    if not corpus.train:
        raise SystemExit(f"no training data found in {config.data_dir}: {corpus.notes}")
    if dist.main:
        prepare_tokenizer(config, corpus)
    dist.barrier()
    tokenizer = RunDir(config.run_dir).load_tokenizer()
    if config.init_from:
        model_config, initial_state, origin = initial_model(config, log)
        model = Transformer(model_config)
        model.load_state_dict(initial_state)
    else:
        model, origin = Transformer(config.model_config(len(tokenizer))), None
    return Start(corpus, tokenizer, model.to(dist.device), origin)


def prepare_tokenizer(config: TrainConfig, corpus: Corpus) -> Tokenizer:
    """Train the shared SentencePiece model on the training split once; reuse it on resume. A run
    continued from a trained model (--init-from), or given one's vocabulary (--vocab-from), keeps
    that vocabulary, truecaser included. With --truecase, a vocabulary without a truecaser gets
    one learnt from the English sources."""
    run = RunDir(config.run_dir)
    vocabulary_of = config.init_from or config.vocab_from
    if vocabulary_of and not run.tokenizer_file.is_file():
        copy_vocabulary(open_model_dir(vocabulary_of).tokenizer_file, run.tokenizer_file)
    if not run.tokenizer_file.is_file():
        learn_vocabulary(corpus, run.tokenizer_prefix, config.vocab_size)
    if config.truecase and not run.truecase_file.is_file():
        Truecaser.learn(sorted({e.source_text for e in corpus.train}), run.truecase_file)
    return run.load_tokenizer()


def learn_vocabulary(corpus: Corpus, prefix, vocab_size: int) -> Tokenizer:
    """The shared SentencePiece model learnt on the training split's sentences."""
    texts = {e.source_text for e in corpus.train}
    texts |= {Tokenizer.target_text(e.target_text, e.target) for e in corpus.train}
    # a set: the vocabulary is learnt from each sentence once, whatever the mixture's repeats
    return Tokenizer.train(sorted(texts), prefix, vocab_size)


def initial_model(
    config: TrainConfig, log: Callable[[str], None]
) -> tuple[ModelConfig, dict, Origin]:
    """--init-from DIR: that model's architecture, weights, training steps and seconds. The
    flags' architecture is ignored (the weights fix it); the flags' dropout applies."""
    model_dir = open_model_dir(config.init_from)
    model, _ = model_dir.load_model()
    card = model_dir.read_card()
    training = card.get("training", {})
    origin = Origin(
        model_dir,
        int(training.get("steps", 0)),
        training.get("seconds", 0.0),
        training.get("vocabulary_transfer"),
    )
    model_config = dataclasses.replace(model.config, dropout=config.dropout)
    log(
        f"initialised from {model_dir.path} ({origin.steps} steps before; "
        f"d_model {model_config.d_model}, vocabulary {model_config.vocab_size})"
    )
    return model_config, model.state_dict(), origin


def measure_dtypes(
    model: Transformer, config: TrainConfig, dist: Distributed, loss_chunk_rows: int
) -> dict[str, float]:
    """Seconds of a forward and backward pass in each compute type (train/loop/hardware.py) on a
    synthetic batch of --max-tokens tokens, the mean over the processes, so that all of them
    choose alike. The probe's random draws leave the run's generators alone."""
    rows = max(1, config.max_tokens // PROBE_LENGTH)
    devices = [dist.device] if dist.device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        batch = torch.randint(4, model.config.vocab_size, (rows, PROBE_LENGTH), device=dist.device)
        steps = {}
        for name, dtype in DTYPES.items():
            loss = TranslationLoss(model, config.label_smoothing, dtype, loss_chunk_rows)
            steps[name] = probe_step(loss, batch, name, dist.device)
        seconds = best_seconds(steps, device=dist.device.type, decisive=DECISIVE_RATIO)
    model.zero_grad(set_to_none=True)
    return {name: dist.mean(value) for name, value in seconds.items()}


def probe_step(loss: TranslationLoss, batch: torch.Tensor, dtype: str, device: torch.device):
    """A forward and backward pass over ``batch`` as source and target, in ``dtype``."""

    def step() -> None:
        with autocast_for(dtype, device):
            loss(batch, batch[:, :-1], batch[:, 1:]).backward()

    return step


def autocast_for(dtype: str, device: torch.device):
    """bf16 autocast (tensor cores on a GPU, AMX or AVX-512 BF16 on a CPU), or plain float32."""
    if dtype == "bf16":
        return torch.autocast(device.type, dtype=torch.bfloat16)
    return nullcontext()


def pick_dtype(
    config: TrainConfig, resumed_dtype: str | None, measure: Callable[[], dict[str, float]]
) -> tuple[str, dict[str, float], str]:
    """The compute type, the timings it was chosen by, and why: --dtype bf16|fp32 as given; a
    resumed run the type its checkpoint was trained in; auto: the faster, by ``measure``."""
    if config.dtype != "auto":
        return config.dtype, {}, "forced by --dtype"
    if resumed_dtype:  # a resumed run computes as the unbroken run would have
        return resumed_dtype, {}, "as measured when the run began, kept from its checkpoint"
    seconds = measure()
    timings = ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in seconds.items())
    return choose_dtype(seconds), seconds, f"measured per step: {timings}"
