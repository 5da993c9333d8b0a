"""The training loss: cross-entropy with label smoothing (section 5.4), over real target tokens.

With smoothing eps and V pieces the target distribution of a token y is

    q = (1 - eps) onehot(y) + eps / V

and the loss of logits z is

    -sum_v q_v log softmax(z)_v = logsumexp(z) - (1 - eps) z_y - eps mean(z),

whose gradient is softmax(z) - q.

:func:`label_smoothed_loss` computes it from logits with PyTorch. :class:`ProjectedLoss` computes
the same loss and gradient fused with the model's pre-softmax projection z = h E^T + b
(Transformer.unembedding: the tied E, and the bias b where the model has one), a few hundred rows at
a time: the (tokens x V) logits never exist whole and the gradient is formed in the
forward pass. On CPU, for a 2,500-token batch over 8,000 pieces, the loss's share of the step
fell from about 148 to 58 ms, and the whole step went from 2.12x to 2.55x the tokens/s of the
trainer before bf16 autocast (benchmarks/training_throughput.py --baseline).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from core.model.transformer import Transformer


def label_smoothed_loss(logits: Tensor, target: Tensor, smoothing: float, pad_id: int) -> Tensor:
    """Summed cross-entropy of logits (B, T, V) against (1 - eps) one-hot + eps uniform,
    pad positions of target (B, T) ignored."""
    return F.cross_entropy(
        logits.float().flatten(0, 1),
        target.flatten(),
        ignore_index=pad_id,
        label_smoothing=smoothing,
        reduction="sum",
    )


def smoothed_loss_and_gradient(
    logits: Tensor, target: Tensor, smoothing: float
) -> tuple[Tensor, Tensor]:
    """The loss of each row of float32 logits (N, V) for targets (N,), (N, 1), and its gradient
    softmax(z) - q (N, V), written over the logits."""
    vocab = logits.size(-1)
    log_normaliser = torch.logsumexp(logits, dim=-1, keepdim=True)  # (N, 1)
    target_logit = logits.gather(1, target[:, None])  # (N, 1)
    loss = log_normaliser - (1 - smoothing) * target_logit - smoothing * logits.mean(-1, True)
    gradient = logits.sub_(log_normaliser).exp_().sub_(smoothing / vocab)  # softmax(z) - eps / V
    gradient.scatter_add_(1, target[:, None], torch.full_like(target_logit, smoothing - 1))
    return loss, gradient


class ProjectedLoss(torch.autograd.Function):
    """loss = sum over rows of label-smoothed cross-entropy of h E^T + b, with its gradient.

    hidden (N, D) the decoder's output at real target positions; embedding (V, D) and bias (V,) or
    None: the model's unembedding (Transformer.unembedding); target (N,). Matrix products run in
    ``dtype`` (bfloat16 to use AMX or tensor cores), softmax, the bias and the loss in float32.
    """

    @staticmethod
    def forward(
        ctx, hidden, embedding, bias, target, smoothing: float, dtype: torch.dtype, chunk_rows: int
    ) -> Tensor:
        with torch.autocast(hidden.device.type, enabled=False):  # the dtypes are explicit here
            unembedding = embedding, bias
            return ProjectedLoss.chunked(
                ctx, hidden, unembedding, target, smoothing, dtype, chunk_rows
            )

    @staticmethod
    def chunked(
        ctx, hidden, unembedding, target, smoothing: float, dtype: torch.dtype, chunk_rows: int
    ) -> Tensor:
        """The loss ``chunk_rows`` rows at a time (256 x 8,000 float32 logits is 8 MB)."""
        n_rows = hidden.size(0)
        # Whole chunks only, the last one filled with zero rows: then every product has the same
        # shapes at every step. With a last chunk of another size at each step (real batches
        # vary), the process grew by GBs and slowed down within minutes (per-shape kernels and
        # buffers of every size). A zero row adds nothing to dL/dE; its loss is left out.
        filler = -n_rows % chunk_rows
        hidden, target = F.pad(hidden, (0, 0, 0, filler)), F.pad(target, (0, filler))
        embedding, bias = unembedding
        weight = embedding.to(dtype)  # (V, D)
        hidden_gradient = torch.empty_like(hidden, dtype=torch.float32)  # (whole chunks, D)
        embedding_gradient = torch.zeros_like(embedding, dtype=torch.float32)  # (V, D)
        bias_gradient = embedding.new_zeros(embedding.size(0), dtype=torch.float32)  # (V,)
        total = hidden.new_zeros((), dtype=torch.float32)
        for start in range(0, hidden.size(0), chunk_rows):
            rows = hidden[start : start + chunk_rows].to(dtype)  # (chunk_rows, D)
            logits = (rows @ weight.T).float()  # (chunk_rows, V)
            if bias is not None:
                logits += bias.float()  # z = h E^T + b
            losses, logits_gradient = smoothed_loss_and_gradient(
                logits, target[start : start + chunk_rows], smoothing
            )
            total += losses[: n_rows - start].sum()  # the real rows
            bias_gradient += logits_gradient[: n_rows - start].sum(0)  # dL/db = sum of G's rows
            logits_gradient = logits_gradient.to(dtype)
            hidden_gradient[start : start + chunk_rows] = logits_gradient @ weight  # dL/dh = G E
            embedding_gradient += (logits_gradient.T @ rows).float()  # dL/dE = G^T h
        ctx.has_bias = bias is not None
        ctx.save_for_backward(
            hidden_gradient[:n_rows].to(hidden.dtype),
            embedding_gradient.to(embedding.dtype),
            bias_gradient.to(embedding.dtype),
        )
        return total

    @staticmethod
    def backward(ctx, upstream: Tensor):
        hidden_gradient, embedding_gradient, bias_gradient = ctx.saved_tensors
        bias_gradient = bias_gradient * upstream if ctx.has_bias else None
        hidden_gradient, embedding_gradient = (
            hidden_gradient * upstream,
            embedding_gradient * upstream,
        )
        return hidden_gradient, embedding_gradient, bias_gradient, None, None, None, None


def logits_loss(
    model: Transformer, hidden: Tensor, target: Tensor, smoothing: float, pad_id: int
) -> Tensor:
    """The summed label-smoothed loss of the decoder's output (B, T, D), from all the logits."""
    return label_smoothed_loss(model.unembed(hidden), target, smoothing, pad_id)  # (B, T, V)


class TranslationLoss(nn.Module):
    """The model and its training loss in one module, so that DistributedDataParallel sees every
    parameter's gradient: forward(source (B, S), decoder input (B, T), decoder output (B, T)) ->
    summed label-smoothed loss over the non-pad target tokens.

    ``chunk_rows`` > 0: :class:`ProjectedLoss` over the real target positions, that many rows at
    a time (a CPU); 0: the logits of every position at once and PyTorch's cross-entropy, pads
    ignored (a GPU: a few large kernels, and shapes that do not depend on the data)."""

    def __init__(
        self, model: Transformer, smoothing: float, dtype: torch.dtype, chunk_rows: int
    ) -> None:
        super().__init__()
        self.model, self.smoothing, self.dtype = model, smoothing, dtype
        self.chunk_rows = chunk_rows
        self.logits_loss = logits_loss

    def compile_logits_loss(self, backend: str = "inductor") -> None:
        """Compile the whole-logits loss (the GPU's path) into fused kernels: the projection's
        output is read once for the log-sum-exp, the smoothing and the target logit, and the
        gradient formed without float32 copies of the (tokens x V) logits (a d_model 192 step
        spent about 40% of its time there, uncompiled, by estimate). Shapes dynamic."""
        self.logits_loss = torch.compile(logits_loss, backend=backend, dynamic=True)

    def forward(self, source: Tensor, target_in: Tensor, target_out: Tensor) -> Tensor:
        memory, source_mask = self.model.encode(source)
        hidden = self.model.decoder_output(target_in, memory, source_mask)  # (B, T, D)
        pad_id = self.model.config.pad_id
        if not self.chunk_rows:
            return self.logits_loss(self.model, hidden, target_out, self.smoothing, pad_id)
        real = target_out != pad_id  # pad rows cost nothing in the loss
        embedding, bias = self.model.unembedding()
        return ProjectedLoss.apply(
            hidden[real],
            embedding,
            bias,
            target_out[real],
            self.smoothing,
            self.dtype,
            self.chunk_rows,
        )
