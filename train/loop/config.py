"""Training configuration: one dataclass, three presets, every field a command-line flag."""

from __future__ import annotations

import argparse
import dataclasses
import math
from dataclasses import dataclass, field
from pathlib import Path

from core.device import DEVICE_CHOICES, DEVICE_HELP
from core.model.config import ModelConfig
from train.data.corpora import MixtureError, default_data_dir, parse_mixture
from train.loop.run_folder import ForeignFolder, check_run_folder

HELP = {
    "preset": "starting point for every other flag: dry-run (CI, < 1 min on CPU), cpu (2 CPU "
    "cores, 140 min of training steps), gpu (the shipped model's shape on one GPU), full (the "
    "paper's base model on one GPU)",
    "device": DEVICE_HELP,
    "data_dir": (
        "corpora folder, see train/data/corpora.py (default: $ATTENTION_LAB_DATA, ../shared/data)"
    ),
    "out": "run folder: vocabulary, checkpoints, metrics.jsonl and the final model/",
    "vocab_size": "SentencePiece pieces shared by English, German and French",
    "d_model": "model width",
    "n_heads": "attention heads per layer",
    "n_layers": "encoder layers, and as many decoder layers",
    "d_ff": "inner size of the position-wise feed-forward network",
    "dropout": "dropout on the embeddings and on every sub-layer's output (section 5.4; none on "
    "the attention weights)",
    "norm_first": "pre-LN (x + Sublayer(LayerNorm(x))) instead of the paper's post-LN",
    "max_len": "longest sequence the model takes, in pieces",
    "max_tokens": "padded tokens per batch (per GPU), source or target side, whichever is longer",
    "max_steps": "stop after this many optimizer steps",
    "max_minutes": "stop after this much training time (summed over resumes); 0 = no limit",
    "stop_at": "stop training at this wall-clock time (seconds since the epoch, time.time()), "
    "whatever --max-minutes says, and export; 0 = no deadline (python -m train.gpu_run sets it so "
    "that a run keeps its --wall-minutes)",
    "warmup": "warm-up steps of the paper's learning-rate schedule",
    "lr_scale": "factor on lr = d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)",
    "label_smoothing": "label smoothing epsilon (the paper: 0.1)",
    "clip": "gradient norm clipping",
    "seed": "random seed (data order, initialisation, dropout)",
    "log_every": "steps between metrics lines",
    "eval_every": "steps between validations (loss, BLEU and chrF)",
    "checkpoint_every": "steps between checkpoints",
    "keep_checkpoints": "how many recent checkpoints to keep",
    "average_last": "the final model averages this many last checkpoints",
    "valid_sentences": "validation sentences per language scored with BLEU/chrF during training",
    "beam_size": "beam size for validation BLEU",
    "data_limit": "read only the first N pairs of each corpus file (0 = all)",
    "dtype": "compute type of the training step: bf16 autocast, fp32, or auto (time a step in "
    "both at start, take the faster: bf16 is fast with AMX or tensor cores, emulated on AVX2)",
    "compile": "torch.compile each encoder and decoder layer for training (one graph per kind "
    "of layer, shapes dynamic; its warm-up is timed apart from the training time)",
    "length_bucket": "pad each batch's source and target to a width of a ladder (multiples of N "
    "up to 8N, of 2N up to 16N, of 4N up to 32N, ...; train/data/batching.py), and its rows to "
    "--max-tokens // the wider, so that batches have few shapes (for --compile); pairs are then "
    "ordered by both sides' widths; 0 = pad each side to its longest row",
    "loader_workers": "DataLoader processes collating batches ahead of the step; -1 = none on a "
    "CPU, up to 4 per GPU",
    "mixture": "corpus weights: times each training pair of a corpus is seen per epoch, e.g. "
    "'tatoeba=1,multi30k=2,general=2,general.fr=4' (corpora not named: 1, the dictionaries 0; "
    "see train/data/corpora.py)",
    "hansard_tag": "the Hansard's sources carry a domain tag in training (train/data/batching.py's "
    "DOMAIN_TAG after the language tag), never given at inference: the model learns what is "
    "parliament's and what is French's",
    "hansard_clean": "take what is parliament's alone out of the Hansard: the address to the "
    "chair, pairs about members, senators and procedure (train/data/parliament.py)",
    "snapshot_steps": "comma-separated steps at which a float16 copy of the model is kept for the "
    "training-dynamics view (the final model is the last one)",
    "init_from": "start from this trained model directory (its weights, vocabulary and shape) with "
    "a fresh optimizer; the schedule goes on from the model's own step count",
    "vocab_from": "take this trained model directory's vocabulary (and truecaser), not its "
    "weights, instead of learning one (the app's model can then be trained from scratch and "
    "continued with --init-from on any device)",
    "init_warmup": "with --init-from: steps of linear warm-up up to the continued schedule",
    "cooldown_steps": "the last N steps before --max-steps scale the learning rate linearly down "
    "to 0 (warm-up, stable, decay: Hägele et al. 2024); 0 = the paper's schedule throughout",
    "concat_fraction": "extra training pairs per epoch made by joining two random pairs of one "
    "language, as a fraction of the corpus (longer sentences; train/data/augment.py)",
    "copy_fraction": "of the pairs that carry a name or number unchanged, the fraction that gets a "
    "second copy per epoch with an invented name or random number in its place",
    "number_copies": "further copies per epoch, with random numbers, of each pair that carries a "
    "number unchanged (numbers are rare in the corpora)",
    "spelling_fraction": "of the pairs whose English has an American spelling (neighbor, color), "
    "the fraction that gets a copy spelled the British way per epoch",
    "subword_alpha": "draw each epoch's segmentation of a sentence from its 8 best, P ~ "
    "P_unigram^alpha (subword regularisation; smaller is more varied); 0 = the best one",
    "subword_sides": "with --subword-alpha: sample the pieces of the source only, or of both "
    "sides (a sampled target teaches the decoder segmentations that beam search then mixes up)",
    "truecase": "learn a truecaser from the English sources when the vocabulary has none, and "
    "train and translate on truecased English (the first word of a sentence as usually written: "
    "'Attention is' -> 'attention is'; core/text/truecase.py)",
    "fresh": "delete the run folder's checkpoints, snapshots, metrics and vocabulary, and start "
    "over instead of resuming (only what the trainer wrote: --out must be a folder it made, "
    "a new or an empty one)",
}


@dataclass
class TrainConfig:
    preset: str = "cpu"
    device: str = "auto"
    data_dir: str = field(default_factory=lambda: str(default_data_dir()))
    out: str = "runs/cpu"
    vocab_size: int = 8000
    d_model: int = 256
    n_heads: int = 8
    n_layers: int = 6
    d_ff: int = 1024
    dropout: float = 0.1
    norm_first: bool = False
    max_len: int = 128
    max_tokens: int = 6000
    max_steps: int = 100_000
    max_minutes: float = 68.0
    stop_at: float = 0.0
    warmup: int = 1000
    lr_scale: float = 0.5
    label_smoothing: float = 0.1
    clip: float = 1.0
    seed: int = 1
    log_every: int = 20
    eval_every: int = 1000
    checkpoint_every: int = 200
    keep_checkpoints: int = 5
    average_last: int = 5
    valid_sentences: int = 100
    beam_size: int = 4
    data_limit: int = 0
    dtype: str = "auto"
    compile: bool = False
    length_bucket: int = 0
    loader_workers: int = -1
    mixture: str = ""
    hansard_tag: bool = False
    hansard_clean: bool = False
    snapshot_steps: str = ""
    init_from: str = ""
    vocab_from: str = ""
    init_warmup: int = 200
    cooldown_steps: int = 0
    concat_fraction: float = 0.0
    copy_fraction: float = 0.0
    number_copies: int = 0
    spelling_fraction: float = 0.0
    subword_alpha: float = 0.0
    subword_sides: str = "both"
    truecase: bool = False
    fresh: bool = False

    def model_config(self, vocab_size: int) -> ModelConfig:
        return ModelConfig(
            vocab_size=vocab_size,
            d_model=self.d_model,
            n_heads=self.n_heads,
            n_encoder_layers=self.n_layers,
            n_decoder_layers=self.n_layers,
            d_ff=self.d_ff,
            dropout=self.dropout,
            max_len=self.max_len,
            norm_first=self.norm_first,
        )

    @property
    def run_dir(self) -> Path:
        return Path(self.out)

    @property
    def data_dir_path(self) -> Path:
        return Path(self.data_dir)

    @property
    def snapshot_step_set(self) -> set[int]:
        """--snapshot-steps as numbers."""
        return {int(step) for step in self.snapshot_steps.split(",") if step.strip()}


# The corpora's weights of the shipped model's last runs (pretrained/en-de-fr/card.md)
SHIPPED_MIXTURE = "tatoeba=1,multi30k=6,general=3,general.fr=2"

# One GPU (the "gpu" and "full" presets): batches of 25,000 tokens in few shapes (a ladder of
# widths) for the compiled layers, collated by DataLoader workers; validation every 5,000 steps,
# as a beam-search pass over the sample costs as much as hundreds of steps there. The shipped
# model's vocabulary size, truecasing and mixture.
ONE_GPU = {
    "vocab_size": 16000,
    "truecase": True,
    "mixture": SHIPPED_MIXTURE,
    "max_tokens": 25000,
    "max_steps": 20000,
    "max_minutes": 0,
    "lr_scale": 1.0,
    "log_every": 100,
    "eval_every": 5000,
    "checkpoint_every": 1000,
    "valid_sentences": 500,
    "compile": True,
    # widths 2, 4, .., 16, 20, .., 32, 40, .., 64, 80, .., 128 per side (train/data/batching.py's
    # ladder), pairs ordered by both sides' widths: 76 shapes, 0.929 of the shipped mixture's
    # padded positions real (the ladder of 4: 54 shapes, 0.902; multiples of 16: 0.686)
    "length_bucket": 2,
}

PRESETS: dict[str, dict] = {
    "dry-run": dict(
        out="runs/dry-run",
        vocab_size=500,
        d_model=32,
        n_heads=4,
        n_layers=1,
        d_ff=64,
        max_tokens=800,
        max_steps=30,
        max_minutes=0,
        warmup=10,
        lr_scale=2.0,
        log_every=5,
        eval_every=30,
        checkpoint_every=10,
        keep_checkpoints=3,
        average_last=2,
        valid_sentences=10,
        beam_size=2,
        data_limit=1500,
        snapshot_steps="5,20",
    ),
    # 2 CPU cores with AMX, bf16 autocast (what --dtype auto picks there): d_model 192 at the
    # paper's depth trains at about 4k target tokens/s (benchmarks/training_throughput.py) and
    # still traces a 30-piece sentence with beam 4 in about 100 ms (benchmarks/latency.py).
    # Pre-LN tolerates the high learning rate that a few thousand updates need. The mixture:
    # see the width and mixture studies in the shipped card (train/shipping/card_sections/).
    "cpu": dict(
        d_model=192,
        d_ff=768,
        norm_first=True,
        max_tokens=2500,
        max_minutes=140.0,
        warmup=1000,
        lr_scale=0.5,
        checkpoint_every=500,
        eval_every=2000,
        mixture="tatoeba=1,multi30k=2,general=2",
        snapshot_steps="100,300,1000,3000,10000",
    ),
    "gpu": {
        **ONE_GPU,
        "out": "runs/gpu",
        "d_model": 192,
        "d_ff": 768,
        "norm_first": True,
        "max_steps": 30000,
        "warmup": 1500,
        "snapshot_steps": "100,300,1000,3000,10000",
    },
    # The paper's base model (Table 3: d_model 512, d_ff 2048, 8 heads, 6 + 6 layers, post-LN,
    # warm-up 4,000, batches of about 25,000 tokens) on the same data as "gpu".
    "full": {**ONE_GPU, "out": "runs/full", "d_model": 512, "d_ff": 2048, "warmup": 4000},
}


CHOICES = {
    "preset": sorted(PRESETS),
    "subword_sides": ["source", "both"],
    "dtype": ["auto", "bf16", "fp32"],
    "device": list(DEVICE_CHOICES),
}


# The ranges of the numeric flags, (lowest, highest); checked before any work, so that a value the
# run cannot use is one line naming it (exit status 2), never a traceback at the export nor an
# untrained model. SentencePiece's byte fallback alone takes 256 pieces of the vocabulary, the
# special pieces and the language tags a few more.
MIN_VOCAB_SIZE = 300
RANGES: dict[str, tuple[float, float]] = {
    "vocab_size": (MIN_VOCAB_SIZE, math.inf),
    "d_model": (2, math.inf),
    "n_heads": (1, math.inf),
    "n_layers": (1, math.inf),
    "d_ff": (1, math.inf),
    "max_len": (8, math.inf),
    "max_tokens": (1, math.inf),
    "max_steps": (1, math.inf),
    "max_minutes": (0, math.inf),
    "warmup": (1, math.inf),
    "init_warmup": (0, math.inf),
    "cooldown_steps": (0, math.inf),
    "log_every": (1, math.inf),
    "eval_every": (1, math.inf),
    "checkpoint_every": (1, math.inf),
    "keep_checkpoints": (1, math.inf),
    "average_last": (1, math.inf),
    "valid_sentences": (1, math.inf),
    "beam_size": (1, 16),
    "data_limit": (0, math.inf),
    "length_bucket": (0, math.inf),
    "loader_workers": (-1, math.inf),
    "seed": (0, 2**63 - 1),
    "concat_fraction": (0, math.inf),
    "copy_fraction": (0, 1),
    "number_copies": (0, math.inf),
    "spelling_fraction": (0, 1),
    "subword_alpha": (0, math.inf),
}
POSITIVE = ("lr_scale", "clip")  # real numbers above 0
BELOW_ONE = ("dropout", "label_smoothing")  # probabilities in [0, 1)


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def config_problems(config: TrainConfig) -> list[str]:
    """What is wrong with the flags' values, one line each naming the flag and its value; [] when
    the run can use them all. --max-minutes 0 means no time limit."""
    problems = []
    for f in dataclasses.fields(TrainConfig):
        value = getattr(config, f.name)
        if f.type not in ("int", "float"):
            continue
        if not math.isfinite(value):
            problems.append(f"{flag(f.name)}: must be a finite number, got {value}")
            continue
        low, high = RANGES.get(f.name, (-math.inf, math.inf))
        if f.name in POSITIVE and value <= 0:
            problems.append(f"{flag(f.name)}: must be above 0, got {value}")
        elif f.name in BELOW_ONE and not 0 <= value < 1:
            problems.append(f"{flag(f.name)}: must be at least 0 and below 1, got {value}")
        elif not low <= value <= high:
            bounds = f"at least {low}" if high == math.inf else f"between {low} and {high}"
            problems.append(f"{flag(f.name)}: must be {bounds}, got {value}")
    if config.d_model % 2 == 0 and config.n_heads >= 1 and config.d_model % config.n_heads:
        problems.append(
            f"--d-model {config.d_model} must be divisible by --n-heads {config.n_heads}"
        )
    if config.d_model % 2:
        problems.append(f"--d-model: must be even (the sinusoidal encoding), got {config.d_model}")
    try:
        steps = config.snapshot_step_set
    except ValueError:
        problems.append(f"--snapshot-steps: not whole numbers: {config.snapshot_steps!r}")
    else:
        if any(step < 1 for step in steps):
            problems.append(f"--snapshot-steps: steps start at 1, got {config.snapshot_steps!r}")
    return problems


def parse_args(argv: list[str] | None = None) -> TrainConfig:
    """Flags override the chosen preset, which overrides the dataclass defaults."""
    parser = argparse.ArgumentParser(
        prog="python -m train",
        description="Train the Attention Lab translation model (English -> German and French). "
        "Run the same command again to resume from the last checkpoint. "
        "Several GPUs: torchrun --nproc_per_node N -m train --preset full",
    )
    parser.add_argument("--dry-run", action="store_true", help="same as --preset dry-run")
    for f in dataclasses.fields(TrainConfig):
        flag = "--" + f.name.replace("_", "-")
        if f.type == "bool":
            parser.add_argument(
                flag, action=argparse.BooleanOptionalAction, default=None, help=HELP[f.name]
            )
        elif f.name in CHOICES:
            parser.add_argument(flag, choices=CHOICES[f.name], default=None, help=HELP[f.name])
        else:
            kind = {"int": int, "float": float}.get(f.type, str)
            parser.add_argument(flag, type=kind, default=None, help=HELP[f.name])
    args = vars(parser.parse_args(argv))
    if args["mixture"] is not None:
        try:
            parse_mixture(args["mixture"])
        except MixtureError as error:
            parser.error(f"--mixture: {error}")
    preset = "dry-run" if args.pop("dry_run") else (args["preset"] or "cpu")
    values = {**PRESETS[preset], "preset": preset}
    values.update({k: v for k, v in args.items() if v is not None and k != "preset"})
    config = TrainConfig(**values)
    problems = config_problems(config)
    try:
        check_run_folder(config.run_dir)
    except ForeignFolder as error:
        problems.append(str(error))
    if problems:
        parser.error("; ".join(problems))
    return config
