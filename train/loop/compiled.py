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

import torch

from core.model.transformer import Transformer
from train.data.batching import padded_width
from train.data.loader import Batch
from train.loop.config import TrainConfig
from train.loop.distributed import Distributed

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


def warm_up(
    loss: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor],
    model: Transformer,
    config: TrainConfig,
    dist: Distributed,
    log: Callable[[str], None],
) -> float:
    """A forward and backward pass of the training step's ``loss`` (the batch's summed loss, in
    the step's compute type) on the shortest and the longest width it can meet, which compiles
    ``model``'s layers; seconds taken. No update, no gradient kept, and the random generators as
    they were: a resumed run draws as the unbroken one."""
    widths = warm_up_widths(config.length_bucket, config.max_len)
    devices = [dist.device] if dist.device.type == "cuda" else []
    started = time.perf_counter()
    with torch.random.fork_rng(devices=devices):
        for source_and_target in widths:
            batch = synthetic_batch(source_and_target, config.max_tokens, model.config.vocab_size)
            loss(*(t.to(dist.device) for t in batch[:3])).backward()
    model.zero_grad(set_to_none=True)
    dist.synchronize()
    seconds = time.perf_counter() - started
    log(f"compiled the layers in {seconds:.1f} s (source x target widths {widths})")
    return seconds
