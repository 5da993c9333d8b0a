"""Translation latency: milliseconds per sentence of ``Translator.translate``, medians of repeats.

Random models translate a 30-token source by greedy search (beam 1) and beam search (beam 4), with
and without the attention trace: d256, the size in the latency budget (6 + 6 layers, 8 heads,
d_model 256, d_ff 1024, 8000 pieces); d192, the shape of the shipped model (train's CPU preset:
d_model 192, d_ff 768, pre-LN) with 8,000 pieces and with 16,000 (d192-16k); d128, the previous
shipped shape; and a tiny one. Two lengths:

    forced   the search runs exactly --steps steps (max_length; a random model never says </s>)
    natural  the default length budget, 1.5 x source + 10 tokens, which the d256 random model
             spends whole (the steps column says how many steps each search took)

The budget: the shipped shape (d192) and d256, beam 4, trace, 32 output tokens, under 150 ms.

    python -m benchmarks.latency                          # the table
    python -m benchmarks.latency --dry-run                # seconds: the tiny model, one repeat
    python -m benchmarks.latency --baseline /tmp/before   # side by side with another core/
    python -m benchmarks.latency --peers                  # against Hugging Face and CTranslate2
    python -m benchmarks.latency --threads 1 2            # every case with 1 and with 2 threads

--peers times beam 4 over --steps forced steps, with every attention map and without, on d128 and
d256 (1 thread unless --threads says otherwise), in five engines: Attention Lab
(core/model/engine.py, as Translator runs it), its readable path (core/model/transformer.py,
Translator(fast=False)), Hugging Face transformers (M2M100 for a pre-LN shape, Marian for post-LN;
eager attention, random weights of the same shapes, ``output_attentions``: every map of every step),
and CTranslate2 in float32 and int8 (the same weights, converted; ``return_attention`` gives
cross-attention only). Its packages are optional, installed by requirements-dev.txt; the app never
imports them.

Threads (measured with --threads 1 2; d192, beam 4 + trace, 32 steps): on an idle machine, in the
main thread, 2 threads take 73 ms against 91 ms with 1 (d128 58 against 65, d256 90 against 126):
the vocabulary projection of 4 rows halves (432 -> 201 us at d192) while every small op pays about 1
us of fork and join (addmm 4x128 @ 128x384: 4.4 -> 5.7 us). With other work on both cores (a
training run), 2 threads took 2.8-12 s per translation against 35-212 ms with 1: each parallel
region waits for a second thread the scheduler has set aside. In another Python thread (as Streamlit
runs every script), torch.set_num_threads called elsewhere may not reach OpenMP, whose thread count
is per thread: in one measurement a translation took 281-292 ms there against 77 ms in the main
thread (a later check, a fresh thread started after the call, inherited 1 thread). Two users at once
in one process, 1 thread each, translated 11.0-11.6 sentences/s against 11.7-11.9 for one user (the
GIL): more threads buy no throughput. The app uses 1 thread, set at the start of each script run
(app/state.py: use_one_thread).

Every repeat runs all cases in turn, so a busy machine slows them alike; ratios within one run say
more than milliseconds. With --baseline, this checkout and the other one run in two worker
processes, warmed up once: each repeat times every case in one and at once in the other (which goes
first alternates), and after/before is the median of these pairs' ratios, beside their middle half.
A pair is a few hundred milliseconds apart, so the machine's drift over seconds falls on both: run
against itself (A/A, d192 and d192-16k, 1 thread) on a noisy 2-core machine, the former scheme (a
fresh process per checkout and repeat, each running every case once, ratios of medians) gave
0.88-1.16 per case.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

try:
    from benchmarks.flags import at_least, checkout_folder
except ModuleNotFoundError:  # a worker runs this file as a script: benchmarks/ is sys.path[0]
    from flags import at_least, checkout_folder

REPO = Path(__file__).resolve().parent.parent

# name -> ModelConfig fields (dropout plays no part in eval mode)
MODELS = {
    "tiny": dict(
        vocab_size=400, d_model=32, n_heads=4, n_encoder_layers=2, n_decoder_layers=2, d_ff=64
    ),
    "d128": dict(vocab_size=8000, d_model=128, n_heads=8, d_ff=512, norm_first=True),
    "d192": dict(vocab_size=8000, d_model=192, n_heads=8, d_ff=768, norm_first=True),
    "d256": dict(vocab_size=8000, d_model=256, n_heads=8, d_ff=1024),
    # the shipped shape with a 16,000-piece vocabulary (issue #27's vocabulary study): the output
    # projection of every step doubles
    "d192-16k": dict(vocab_size=16000, d_model=192, n_heads=8, d_ff=768, norm_first=True),
}
SEARCHES = {"greedy": 1, "beam4": 4}
BUDGET_MODELS = ["d192", "d192-16k", "d256"]  # shipped shape, its 16k variant, the reference


class NumberTokenizer:
    """A stand-in vocabulary: text is piece ids written as numbers, so a source has exactly the
    length asked for. (SentencePiece takes microseconds; it is not what is measured here.)"""

    def __init__(self, vocab_size: int) -> None:
        from core.text.tokenizer import EOS_ID, LANGUAGES

        self.eos_id, self.languages = EOS_ID, LANGUAGES
        self.tag_ids = {target: 4 + i for i, target in enumerate(sorted(LANGUAGES))}
        self.vocab_size = vocab_size

    def __len__(self) -> int:
        return self.vocab_size

    def encode_source(self, text: str, target: str) -> list[int]:
        return [self.tag_ids[target], *map(int, text.split()), self.eos_id]

    def decode(self, ids: list[int], target: str | None = None) -> str:
        return " ".join(map(str, ids))

    def pieces(self, ids: list[int]) -> list[str]:
        return [f"<{i}>" for i in ids]

    def is_special(self, token_id: int) -> bool:
        return token_id == self.eos_id or token_id in self.tag_ids.values()

    def is_byte(self, token_id: int) -> bool:
        return False


def build_translator(name: str, seed: int = 0):
    """A Translator around a random model of MODELS[name], in eval mode."""
    import torch

    from core.model.config import ModelConfig
    from core.model.transformer import Transformer
    from core.translator import Translator

    config = ModelConfig(**MODELS[name], max_len=256)
    torch.manual_seed(seed)
    return Translator(Transformer(config), NumberTokenizer(config.vocab_size))


def source_text(vocab_size: int, length: int, seed: int = 0) -> str:
    """length - 2 random piece ids: with the language tag and </s>, a source of ``length``."""
    import random

    rng = random.Random(seed)
    return " ".join(str(rng.randrange(8, vocab_size)) for _ in range(length - 2))


def cases(args: argparse.Namespace) -> list[dict]:
    return [
        dict(model=model, search=search, trace=trace, length=length, threads=threads)
        for model in args.models
        for threads in args.threads
        for search in SEARCHES
        for trace in (False, True)
        for length in ("forced", "natural")
    ]


def label(case: dict) -> str:
    trace = "trace" if case["trace"] else "-"
    return (
        f"{case['model']:<5} {case['search']:<6} {trace:<5} {case['length']:<7} {case['threads']}"
    )


def prepared(args: argparse.Namespace) -> tuple[Callable[[dict], float], dict[str, list[int]]]:
    """The translators built and warmed up: a function timing one translation of a case
    (milliseconds), and label + ' steps' -> the decoding steps each case takes."""
    import torch

    translators = {name: build_translator(name) for name in args.models}
    texts = {
        name: source_text(MODELS[name]["vocab_size"], args.source_length) for name in args.models
    }

    def translate(case: dict):
        torch.set_num_threads(case["threads"])
        return translators[case["model"]].translate(
            texts[case["model"]],
            beam_size=SEARCHES[case["search"]],
            trace=case["trace"],
            max_length=args.steps if case["length"] == "forced" else None,
        )

    def timed(case: dict) -> float:
        start = time.perf_counter()
        translate(case)
        return 1000 * (time.perf_counter() - start)

    steps = {}
    for case in cases(args):  # warm-up, and how many steps the search took (trace or not, the same)
        steps[label(case) + " steps"] = [len(translate({**case, "trace": True}).steps)]
        translate(case)
    return timed, steps


def measure(args: argparse.Namespace) -> dict[str, list[float]]:
    """Run every case args.repeats times, round-robin; returns label -> milliseconds, and
    label + ' steps' -> decoding steps."""
    timed, results = prepared(args)
    todo = cases(args)
    for case in todo:
        results[label(case)] = []
    for _ in range(args.repeats):
        for case in todo:
            results[label(case)].append(timed(case))
    return results


def serve(args: argparse.Namespace) -> None:
    """A worker of --baseline: warms up, prints each case's steps, then times one translation of
    every case whose label comes in on stdin, printing its milliseconds."""
    timed, steps = prepared(args)
    by_label = {label(case): case for case in cases(args)}
    print(json.dumps(steps), flush=True)
    for line in sys.stdin:
        print(json.dumps(timed(by_label[line.strip()])), flush=True)


def worker_flags(args: argparse.Namespace) -> list[str]:
    return [
        "--models",
        *args.models,
        "--threads",
        *map(str, args.threads),
        "--steps",
        str(args.steps),
        "--source-length",
        str(args.source_length),
    ]


class Worker:
    """A process importing core/ from ``source`` that times cases on request (:func:`serve`)."""

    def __init__(self, args: argparse.Namespace, source: Path) -> None:
        command = [sys.executable, __file__, "--worker", str(source), *worker_flags(args)]
        self.source = source
        pipe = subprocess.PIPE
        self.process = subprocess.Popen(command, stdin=pipe, stdout=pipe, text=True)
        self.steps: dict[str, list[int]] = self.answer()

    def answer(self):
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"The worker running {self.source} stopped (its error is above).")
        return json.loads(line)

    def time(self, key: str) -> float:
        """Milliseconds of one translation of the case labelled ``key``."""
        self.process.stdin.write(key + "\n")
        self.process.stdin.flush()
        return self.answer()

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def side_by_side(args: argparse.Namespace) -> tuple[dict, dict, dict[str, list[float]]]:
    """This checkout and --baseline, each in a worker process, warmed up once: every repeat times
    each case in one and at once in the other (which goes first alternates), so that a drift of
    the machine over seconds falls on both alike. Returns after and before (as :func:`measure`)
    and label -> the after/before ratio of each pair."""
    workers = [Worker(args, REPO), Worker(args, args.baseline)]
    try:
        after, before = ({**worker.steps} for worker in workers)
        ratios: dict[str, list[float]] = {}
        for repeat, (i, case) in itertools.product(range(args.repeats), enumerate(cases(args))):
            key = label(case)
            first, second = workers if (repeat + i) % 2 == 0 else workers[::-1]
            times = {first: first.time(key), second: second.time(key)}
            after.setdefault(key, []).append(times[workers[0]])
            before.setdefault(key, []).append(times[workers[1]])
            ratios.setdefault(key, []).append(times[workers[0]] / times[workers[1]])
    finally:
        for worker in workers:
            worker.close()
    return after, before, ratios


def middle_half(values: list[float]) -> str:
    """The range of the middle half of ``values`` (quartiles), or '-' for fewer than 2."""
    if len(values) < 2:
        return "-"
    low, _, high = statistics.quantiles(values, n=4)
    return f"{low:.2f}-{high:.2f}"


def report(
    args: argparse.Namespace, after: dict, before: dict | None = None, ratios: dict | None = None
) -> None:
    """The table: median milliseconds per case; with a baseline, its median, the median of the
    pairs' after/before ratios, and their middle half."""
    header = f"{'model search trace length threads':<36} {'steps':>6} {'ms':>8}"
    if before is not None:
        header += f" {'before ms':>10} {'after/before':>12} {'middle half':>12}"
    print(header)
    for case in cases(args):
        key = label(case)
        ms = statistics.median(after[key])
        line = f"{key:<36} {after[key + ' steps'][0]:>6} {ms:>8.1f}"
        if before is not None:
            old, ratio = statistics.median(before[key]), statistics.median(ratios[key])
            line += f" {old:>10.1f} {ratio:>12.2f} {middle_half(ratios[key]):>12}"
        print(line)
    budget = {"search": "beam4", "trace": True, "length": "forced"}
    for model in [name for name in BUDGET_MODELS if name in args.models]:
        for threads in args.threads:
            ms = statistics.median(after[label({**budget, "model": model, "threads": threads})])
            verdict = "met" if ms < args.budget else "NOT met"
            print(
                f"budget: {model} beam 4 + trace, {args.steps} steps, {threads} thread(s): "
                f"{ms:.1f} ms, {verdict} (< {args.budget:g} ms)"
            )


# --------------------------------------------------------------------------------------------------
# Peers: the same shapes in Hugging Face transformers and CTranslate2 (--peers)
# --------------------------------------------------------------------------------------------------

PEER_MODELS = ["d128", "d256"]
PEERS = ["Attention Lab", "readable", "HF transformers", "CT2 fp32", "CT2 int8"]
PEER_BEAM = 4
CLOCKS = {
    "wall": "wall time (the latency a user sees; on a busy machine it includes waiting for a core)",
    "cpu": "CPU time of the process (every thread; steadier on a busy machine)",
}
HF_TARGET = 2.0  # Attention Lab at least this many times faster than HF, with every map
CT2_TARGET = 1.5  # and at most this many times slower than CTranslate2 fp32


def hf_model(name: str):
    """A Hugging Face encoder-decoder of the shape MODELS[name], random weights, eager attention:
    M2M100 for a pre-LN shape, Marian (the paper's post-LN) otherwise."""
    import torch
    import transformers

    from core.text.tokenizer import BOS_ID, EOS_ID, PAD_ID

    shape = MODELS[name]
    config_class, model_class = (
        (transformers.M2M100Config, transformers.M2M100ForConditionalGeneration)
        if shape.get("norm_first")
        else (transformers.MarianConfig, transformers.MarianMTModel)
    )
    config = config_class(
        vocab_size=shape["vocab_size"],
        d_model=shape["d_model"],
        encoder_layers=shape.get("n_encoder_layers", 6),
        decoder_layers=shape.get("n_decoder_layers", 6),
        encoder_attention_heads=shape["n_heads"],
        decoder_attention_heads=shape["n_heads"],
        encoder_ffn_dim=shape["d_ff"],
        decoder_ffn_dim=shape["d_ff"],
        max_position_embeddings=256,
        activation_function="relu",
        scale_embedding=True,
        pad_token_id=PAD_ID,
        bos_token_id=BOS_ID,
        eos_token_id=EOS_ID,
        decoder_start_token_id=BOS_ID,
    )
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    return model_class(config).eval()


class CTranslate2Port:
    """Copies a model's weights, by their names in core/model/transformer.py, into a CTranslate2
    spec."""

    def __init__(self, model) -> None:
        self.weights = {k: v.detach().numpy().copy() for k, v in model.state_dict().items()}

    def linear(self, spec, *names: str) -> None:
        """One layer, or several stacked into one (CTranslate2 fuses W^Q, W^K, W^V)."""
        import numpy as np

        spec.weight = np.concatenate([self.weights[f"{name}.weight"] for name in names])
        spec.bias = np.concatenate([self.weights[f"{name}.bias"] for name in names])

    def norm(self, spec, name: str) -> None:
        spec.gamma, spec.beta = self.weights[f"{name}.weight"], self.weights[f"{name}.bias"]

    def attention(self, spec, name: str, norm: str, cross: bool = False) -> None:
        """Self-attention: [W^Q; W^K; W^V], W^O; cross-attention: W^Q, [W^K; W^V], W^O."""
        stacked = [["w_q"], ["w_k", "w_v"]] if cross else [["w_q", "w_k", "w_v"]]
        for layer, parts in zip(spec.linear, [*stacked, ["w_o"]]):
            self.linear(layer, *(f"{name}.{part}" for part in parts))
        self.norm(spec.layer_norm, norm)

    def feed_forward(self, spec, layer: str) -> None:
        self.linear(spec.linear_0, f"{layer}.feed_forward.w_1")
        self.linear(spec.linear_1, f"{layer}.feed_forward.w_2")
        self.norm(spec.layer_norm, f"{layer}.residual_ff.norm")


def ctranslate2_spec(model):
    """The model as a CTranslate2 Transformer: the same weights, embeddings and positions."""
    import numpy as np
    from ctranslate2.specs import transformer_spec

    config, port = model.config, CTranslate2Port(model)
    spec = transformer_spec.TransformerSpec.from_config(
        (config.n_encoder_layers, config.n_decoder_layers),
        config.n_heads,
        pre_norm=config.norm_first,
    )
    stacks = ((spec.encoder, spec.encoder.embeddings[0]), (spec.decoder, spec.decoder.embeddings))
    for (stack, embeddings), name in zip(stacks, ("encoder", "decoder")):
        embeddings.weight = port.weights["embedding.weight"]
        stack.position_encodings.encodings = model.pe.numpy().copy()
        stack.scale_embeddings = True
        if config.norm_first:
            port.norm(stack.layer_norm, f"{name}_norm")
    for i, layer in enumerate(spec.encoder.layer):
        name = f"encoder_layers.{i}"
        port.attention(layer.self_attention, f"{name}.self_attn", f"{name}.residual_attn.norm")
        port.feed_forward(layer.ffn, name)
    for i, layer in enumerate(spec.decoder.layer):
        name = f"decoder_layers.{i}"
        port.attention(layer.self_attention, f"{name}.self_attn", f"{name}.residual_self.norm")
        port.attention(
            layer.attention, f"{name}.cross_attn", f"{name}.residual_cross.norm", cross=True
        )
        port.feed_forward(layer.ffn, name)
    spec.decoder.projection.weight = port.weights["embedding.weight"]  # tied (section 3.4)
    spec.decoder.projection.bias = np.zeros(config.vocab_size, dtype=np.float32)
    spec.config.layer_norm_epsilon = 1e-5  # nn.LayerNorm's
    vocabulary = ctranslate2_vocabulary(config.vocab_size)
    spec.register_source_vocabulary(vocabulary)
    spec.register_target_vocabulary(vocabulary)
    return spec


def ctranslate2_vocabulary(size: int) -> list[str]:
    """Piece i is "<i>", and the special pieces have the names CTranslate2 looks for."""
    from core.text.tokenizer import BOS_ID, EOS_ID, PAD_ID, UNK_ID

    vocabulary = [f"<{i}>" for i in range(size)]
    for i, token in ((PAD_ID, "<blank>"), (UNK_ID, "<unk>"), (BOS_ID, "<s>"), (EOS_ID, "</s>")):
        vocabulary[i] = token
    return vocabulary


def ctranslate2_translator(model, directory: Path, quantization: str, threads: int):
    """A ctranslate2.Translator running ``model``'s weights, stored in ``directory``."""
    import ctranslate2

    spec = ctranslate2_spec(model)
    spec.validate()
    spec.optimize(quantization=quantization)
    directory.mkdir(parents=True)
    spec.save(str(directory))
    return ctranslate2.Translator(
        str(directory), "cpu", compute_type=quantization, inter_threads=1, intra_threads=threads
    )


def peer_runs(name: str, threads: int, args: argparse.Namespace, directory: Path) -> dict:
    """ "runs": (peer, maps) -> a function translating the 30-token source by beam 4 in args.steps
    forced steps; "log P difference": see :func:`log_prob_difference`."""
    import torch

    from core.translator import Translator

    translator = build_translator(name)
    readable = Translator(translator.model, translator.tokenizer, fast=False)
    text = source_text(MODELS[name]["vocab_size"], args.source_length)
    ids = translator.tokenizer.encode_source(text, "de")
    hf = hf_model(name)
    source = torch.tensor([ids])
    ct2 = {
        q: ctranslate2_translator(translator.model, directory / f"{name}-{q}", q, threads)
        for q in ("float32", "int8")
    }
    vocabulary = ctranslate2_vocabulary(translator.model.config.vocab_size)
    tokens = [vocabulary[i] for i in ids]
    steps = dict(min_decoding_length=args.steps, max_decoding_length=args.steps)

    def lab(which, maps):
        return lambda: which.translate(text, beam_size=PEER_BEAM, trace=maps, max_length=args.steps)

    def hugging_face(maps):
        return lambda: hf.generate(
            source,
            attention_mask=torch.ones_like(source),
            num_beams=PEER_BEAM,
            do_sample=False,
            min_new_tokens=args.steps,
            max_new_tokens=args.steps,
            output_attentions=maps,
            return_dict_in_generate=True,
        )

    def ctranslate2(quantization, maps):
        return lambda: ct2[quantization].translate_batch(
            [tokens], beam_size=PEER_BEAM, return_attention=maps, **steps
        )

    runs = {}
    for maps in (True, False):
        runs["Attention Lab", maps] = lab(translator, maps)
        runs["readable", maps] = lab(readable, maps)
        runs["HF transformers", maps] = hugging_face(maps)
        runs["CT2 fp32", maps] = ctranslate2("float32", maps)
        runs["CT2 int8", maps] = ctranslate2("int8", maps)
    return {"runs": runs, "log P difference": log_prob_difference(translator, ct2["float32"], text)}


def log_prob_difference(translator, ct2, text: str) -> float:
    """max |log P(y_t | y_<t, x)| difference between Attention Lab and CTranslate2 over the output
    of Attention Lab's beam search: how exactly CTranslate2 runs the same weights."""
    from core.text.tokenizer import EOS_ID

    result = translator.translate(text, beam_size=PEER_BEAM)
    ours = translator.trace(result).token_log_probs  # log P of each output token, </s> included
    vocabulary = ctranslate2_vocabulary(len(translator.tokenizer))
    target = [vocabulary[i] for i in result.output_ids if i != EOS_ID]  # CTranslate2 adds </s>
    source = [vocabulary[i] for i in result.source_ids]
    theirs = ct2.score_batch([source], [target])[0].log_probs[: len(ours)]
    return max(abs(a - b) for a, b in zip(ours, theirs))


def measure_peers(args: argparse.Namespace) -> tuple[dict, dict]:
    """Every (model, threads, maps, peer) args.repeats times, round-robin -> milliseconds of wall
    time and of the process's CPU time, keyed (clock, model, threads, maps, peer); and per
    (model, threads) the log P difference of CTranslate2 fp32."""
    import tempfile

    import torch

    results: dict[tuple, list[float]] = {}
    exactness: dict[tuple, float] = {}
    with tempfile.TemporaryDirectory(prefix="latency-peers-") as directory:
        runs = {}
        for name in args.models:
            for threads in args.threads:
                torch.set_num_threads(threads)
                built = peer_runs(name, threads, args, Path(directory))
                exactness[name, threads] = built["log P difference"]
                for (peer, maps), run in built["runs"].items():
                    runs[name, threads, maps, peer] = run
        for key, run in runs.items():  # warm-up
            torch.set_num_threads(key[1])
            run()
        for _ in range(args.repeats):
            for key, run in runs.items():
                torch.set_num_threads(key[1])
                wall, cpu = time.perf_counter(), time.process_time()
                run()
                results.setdefault(("wall", *key), []).append(1000 * (time.perf_counter() - wall))
                results.setdefault(("cpu", *key), []).append(1000 * (time.process_time() - cpu))
    return results, exactness


def report_peers(args: argparse.Namespace, results: dict, exactness: dict) -> None:
    """The table of the issue, in wall time and in CPU time, and the targets."""
    print(
        f"beam {PEER_BEAM}, {args.source_length}-token source, {args.steps} forced steps, "
        f"median of {args.repeats}, ms; all maps: Attention Lab every map (encoder, decoder, "
        "cross, and every beam step's cross-attention), HF every map of every step, "
        "CTranslate2 cross-attention only"
    )
    runs = list(itertools.product(args.models, args.threads))
    for clock, title in CLOCKS.items():
        print(f"\n{title}")
        print(f"{'case':<30}" + "".join(f"{p:>16}" for p in PEERS) + f"{'HF/Lab':>8}{'Lab/CT2':>8}")
        for (name, threads), maps in itertools.product(runs, (True, False)):
            ms = medians(results, clock, name, threads, maps)
            case = f"{name}, {threads} thread(s), " + ("all maps" if maps else "no maps")
            row = "".join(f"{ms[p]:>16.1f}" for p in PEERS)
            hf, ct2 = (
                ms["HF transformers"] / ms["Attention Lab"],
                ms["Attention Lab"] / ms["CT2 fp32"],
            )
            print(f"{case:<30}{row}{hf:>8.2f}{ct2:>8.2f}")
        for name, threads in runs:
            print(target_verdict(medians(results, clock, name, threads, True), name, threads))
    for (name, threads), difference in exactness.items():
        print(
            f"{name}, {threads} thread(s): CTranslate2 fp32 computes Attention Lab's log P "
            f"within {difference:.1e} (the same weights)"
        )


def medians(results: dict, clock: str, name: str, threads: int, maps: bool) -> dict[str, float]:
    """peer -> median milliseconds of one case."""
    return {peer: statistics.median(results[clock, name, threads, maps, peer]) for peer in PEERS}


def target_verdict(ms: dict[str, float], name: str, threads: int) -> str:
    """The issue's targets for beam 4 with every map: >= 2x faster than HF, <= 1.5x CT2 fp32."""
    faster = ms["HF transformers"] / ms["Attention Lab"]
    slower = ms["Attention Lab"] / ms["CT2 fp32"]
    return (
        f"target {name}, {threads} thread(s), all maps: {faster:.2f}x faster than HF "
        f"({'met' if faster >= HF_TARGET else 'NOT met'}, >= {HF_TARGET:g}x), "
        f"{slower:.2f}x CTranslate2 fp32 ({'met' if slower <= CT2_TARGET else 'NOT met'}, "
        f"<= {CT2_TARGET:g}x)"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--models",
        nargs="+",
        choices=sorted(MODELS),
        help=f"model sizes to run (default: {' '.join(MODELS)}; with --peers, "
        f"{' '.join(PEER_MODELS)})",
    )
    parser.add_argument(
        "--threads",
        nargs="+",
        type=at_least(1),
        help="torch.set_num_threads values to run every case with (default: torch's default; "
        "with --peers, 1)",
    )
    parser.add_argument(
        "--steps",
        type=at_least(1),
        default=32,
        help="decoding steps (output tokens) of the forced-length cases",
    )
    parser.add_argument(
        "--source-length", type=at_least(1), default=30, help="source tokens, tag and </s> included"
    )
    parser.add_argument("--repeats", type=at_least(1), default=7, help="timed runs of every case")
    parser.add_argument(
        "--budget", type=float, default=150.0, help="milliseconds the budget case must beat"
    )
    parser.add_argument(
        "--baseline",
        type=checkout_folder,
        help="a folder holding another core/ (e.g. an export of an older commit): it and this "
        "checkout run in two worker processes, each case timed in one and at once in the other",
    )
    parser.add_argument(
        "--peers",
        action="store_true",
        help="time Attention Lab, its readable path, Hugging Face transformers and CTranslate2 "
        f"(fp32, int8) side by side, beam 4 with and without maps (default models: "
        f"{' '.join(PEER_MODELS)}; needs requirements-dev.txt)",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="seconds: the tiny model, 4 steps, one repeat (checks that the benchmark runs)",
    )
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.peers:
        args.models, args.threads = args.models or PEER_MODELS, args.threads or [1]
    args.models = args.models or list(MODELS)
    if args.dry_run:
        args.models, args.steps, args.repeats = ["tiny"], 4, 1

    source = args.worker or REPO
    sys.path.insert(0, str(source))
    import torch

    args.threads = args.threads or [torch.get_num_threads()]
    if args.worker:
        serve(args)
        return

    import core

    print(f"torch {torch.__version__}, core from {Path(core.__file__).parent}")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if args.peers:
        import ctranslate2
        import transformers

        transformers.logging.set_verbosity_error()
        print(f"transformers {transformers.__version__}, ctranslate2 {ctranslate2.__version__}")
        results, exactness = measure_peers(args)
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        report_peers(args, results, exactness)
        return
    results = (measure(args),) if args.baseline is None else side_by_side(args)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    report(args, *results)


if __name__ == "__main__":
    main()
