"""torch.compile for training, as regional compilation: each encoder and each decoder layer is
compiled, with dynamic shapes. The six layers of a stack are one code with other weights, so
torch.compile builds one graph for all of them: two graphs for the model, whatever the batch
shapes (tests/train/test_loader.py counts them with torch._dynamo's counters). The embedding and
the loss run as written, a handful of large kernels.

The graphs are built by a warm-up before the first step, timed apart from the training time that
--max-minutes counts, on synthetic batches of the shortest and the longest padded width
(warm_up_widths).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import torch

from core.model.transformer import Transformer
from train.batching import padded_width
from train.loader import Batch

if TYPE_CHECKING:
    from train.trainer import Trainer

SHORTEST_WARM_UP = 16  # pieces per row of the first warm-up batch, when no bucket is set


def compile_layers(model: Transformer, backend: str = "inductor") -> None:
    """Compile every encoder and decoder layer in place (nn.Module.compile): their weights and
    state_dict stay the model's."""
    for layer in [*model.encoder_layers, *model.decoder_layers]:
        layer.compile(backend=backend, dynamic=True)


def warm_up_widths(bucket: int, max_len: int) -> list[tuple[int, int]]:
    """The (source, target) widths of the warm-up's batches: the shortest and the longest padded
    width, each side once the shorter, so that no two sizes are equal where a batch's may differ
    (torch.compile's dynamic shapes give equal sizes one symbol, and a batch whose sides differ
    would build a graph of its own)."""
    short, long = padded_width(SHORTEST_WARM_UP, bucket), padded_width(max_len - 1, bucket)
    return [(short, long), (long, short)]


def synthetic_batch(widths: tuple[int, int], max_tokens: int, vocab_size: int) -> Batch:
    """max_tokens // the wider width rows of random pieces, the source ``widths[0]`` wide and the
    target ``widths[1]``, all of them real: three tensors of their own, as a collated batch's are
    (views of one tensor made the compiled loss guard on their base, ``target._base``, which a
    real batch's target has not: it built a graph of its own after the warm-up)."""
    rows = max(2, max_tokens // max(widths))
    source = torch.randint(4, vocab_size, (rows, widths[0]))
    target_in = torch.randint(4, vocab_size, (rows, widths[1]))
    target_out = torch.randint(4, vocab_size, (rows, widths[1]))
    return Batch(source, target_in, target_out, rows * widths[1])


def warm_up(trainer: Trainer, log: Callable[[str], None]) -> float:
    """A forward and backward pass of the trainer's step on the shortest and the longest width it
    can meet, which compiles the layers; seconds taken. No update, no gradient kept, and the
    random generators as they were: a resumed run draws as the unbroken one."""
    config, model = trainer.config, trainer.model
    bucket = config.length_bucket
    widths = warm_up_widths(bucket, config.max_len)
    devices = [trainer.device] if trainer.device.type == "cuda" else []
    started = time.perf_counter()
    with torch.random.fork_rng(devices=devices):
        for source_and_target in widths:
            batch = synthetic_batch(source_and_target, config.max_tokens, model.config.vocab_size)
            source, target_in, target_out = (t.to(trainer.device) for t in batch[:3])
            with trainer.autocast():
                trainer.forward(source, target_in, target_out).backward()
    model.zero_grad(set_to_none=True)
    trainer.dist.synchronize()
    seconds = time.perf_counter() - started
    log(f"compiled the layers in {seconds:.1f} s (source x target widths {widths})")
    return seconds
