"""The app's pages and the settings each reads, declared once: for every page (its file under
app/views/) its title and icon in the sidebar, and each of its settings by the widget key that
is also its name in the URL (``?kind=cross&layer=6``) and in a deck (app/deck.py): its type, the
values it allows (which may depend on the model and on the page's other settings), its default,
its label and help. No Streamlit here: app/controls.py draws a setting's widget from it,
app/main.py lists the pages from it, app/deck.py checks a deck's steps against it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from app.display import ATTENTION_KINDS
from app.figures.positional import PE_ORDERS
from app.story import STEPS as STORY_STEPS
from core import PAPER_DECODING
from core.inspection import INTERVENTIONS, KINDS, Head

# The attention page's tabs, by their labels (the URL's ?view=)
ATTENTION_VIEWS = ("One head", "All layers and heads")
# How the Embeddings page's encoder input figure colours its panels (the URL holds the key)
EMBEDDING_SCALES = {
    "shared": "One scale: true sizes",
    "own": "Each panel its own scale: PE visible",
}
# The statistics the Heads lab's dashboard colours its heads by
STATISTICS = {
    "confidence": "Confidence: mean top weight, </s> excluded (Voita et al. 2019)",
    "entropy": "Entropy of the rows, nats (Clark et al. 2019)",
    "sink_share": "Share on sinks: </s>, <s>/tag, punctuation (Clark et al. 2019)",
    "mean_distance": "Mean distance |i - j| (self-attention)",
    "same_share": "Rows whose top key is the same position (Voita et al. 2019)",
    "previous_share": "Rows whose top key is the previous position",
    "next_share": "Rows whose top key is the next position",
    "diagonality": "Diagonality, alignment-like (cross-attention)",
    "monotonicity": "Monotonicity, Spearman's rho (cross-attention)",
}
# The story's chapters as its step picker names them
STORY_CHAPTERS = [f"{number} · {chapter.title}" for number, chapter in enumerate(STORY_STEPS, 1)]


@dataclass(frozen=True)
class ModelShape:
    """What of the model a page's settings must fit: layers per kind of attention, heads per
    layer, the languages it translates into, the training steps of its snapshots, and its
    d_model and longest input (None: not known, so not checked)."""

    layers: Mapping[str, int]
    heads: int
    targets: tuple[str, ...]
    snapshots: tuple[int, ...] = ()
    d_model: int | None = None
    max_len: int | None = None

    @classmethod
    def of(
        cls,
        encoder_layers: int,
        decoder_layers: int,
        heads: int,
        targets: Sequence[str],
        snapshots: Sequence[int] = (),
        d_model: int | None = None,
        max_len: int | None = None,
    ) -> ModelShape:
        """The shape of a model of ``encoder_layers`` and ``decoder_layers`` layers: the decoder's
        layers hold both its self-attention and its cross-attention."""
        layers = {"encoder": encoder_layers, "decoder": decoder_layers, "cross": decoder_layers}
        return cls(layers, heads, tuple(targets), tuple(snapshots), d_model, max_len)


def toml_value(value: Any) -> str:
    """A setting's value as TOML: JSON writes strings, numbers, true/false and lists the way
    TOML reads them."""
    return json.dumps(value, ensure_ascii=False)


def quoted(value: Any) -> str:
    """A value as a deck file writes it, for messages."""
    return toml_value(value) if isinstance(value, (str, bool, int, float, list)) else repr(value)


def spelled(options: Sequence) -> str:
    """The options a setting allows, for a message: a run of whole numbers as its ends."""
    whole = len(options) > 2 and all(isinstance(option, int) for option in options)
    if whole and list(options) == list(range(options[0], options[-1] + 1)):
        return f"{options[0]} to {options[-1]}"
    return ", ".join(quoted(option) for option in options)


def average_named(head: int | str) -> str:
    """A head as the Compare page names it: "average" for the mean of the heads."""
    return "average" if head == "avg" else str(head)


@dataclass(frozen=True, kw_only=True)
class Setting:
    """One setting a page reads: the TOML type it takes in a deck (a whole number, text, true or
    false...), the values it allows, which may depend on the model and on the page's other
    settings (a layer on the kind of attention), and how its widget shows it: ``label``,
    ``help``, ``format`` (an option as shown), ``default`` (None: the first option) and
    ``in_presentation`` (a picker presentation mode keeps: what a lecturer changes while
    presenting)."""

    label: str = ""
    help: str | None = None
    default: Any = None
    format: Callable[[Any], str] = str
    in_presentation: bool = False

    kinds: ClassVar[tuple[type, ...]] = (str,)  # the TOML types it takes
    described: ClassVar[str] = "text"  # what the value must be, for a message

    def problem(self, value: Any, step: Mapping[str, Any], shape: ModelShape) -> str | None:
        """What is wrong with ``value`` in a step with settings ``step``, or None."""
        if isinstance(value, bool) != (bool in self.kinds) or not isinstance(value, self.kinds):
            return f"{quoted(value)} is not {self.described}"
        options = self.options(step, shape)
        if options is None:
            return self.checked(value)
        items = value if isinstance(value, list) else [value]
        outside = [item for item in items if item not in options]
        if not options:
            return f"{quoted(value)} cannot be shown: this model offers none"
        return self.outside(outside[0], options) if outside else None

    def outside(self, value: Any, options: Sequence) -> str:
        """The message for ``value``, which is not one of ``options``."""
        return f"{quoted(value)} is not one of {spelled(options)}"

    def options(self, step: Mapping[str, Any], shape: ModelShape) -> Sequence | None:
        """The values allowed with the settings ``step`` on this model; None: any of the type's
        values (the page's data bounds them: a row of the sentence, a step of the search)."""
        return None

    def checked(self, value: Any) -> str | None:
        """What is wrong with a value of the right type, when no list of options bounds it."""
        return None

    def default_of(self, options: Sequence) -> Any:
        """The value the page opens with, given the ``options`` it offers."""
        return options[0] if self.default is None else self.default


class Text(Setting):
    def checked(self, value: Any) -> str | None:
        return None if value.strip() else "the text is empty"


@dataclass(frozen=True, kw_only=True)
class Flag(Setting):
    default: bool = False
    kinds: ClassVar[tuple[type, ...]] = (bool,)
    described: ClassVar[str] = "true or false"


@dataclass(frozen=True, kw_only=True)
class Choice(Setting):
    """One of a fixed list of options (a kind of attention, a tab...)."""

    allowed: tuple = ()

    def options(self, step: Mapping[str, Any], shape: ModelShape) -> Sequence:
        return self.allowed


@dataclass(frozen=True, kw_only=True)
class Whole(Setting):
    """A whole number from ``low`` to ``high`` (None: no bound above but the page's data)."""

    low: int = 0
    high: int | None = None
    kinds: ClassVar[tuple[type, ...]] = (int,)
    described: ClassVar[str] = "a whole number"

    def options(self, step: Mapping[str, Any], shape: ModelShape) -> Sequence | None:
        return None if self.high is None else range(self.low, self.high + 1)

    def checked(self, value: Any) -> str | None:
        return None if value >= self.low else f"{value} is below {self.low}"


@dataclass(frozen=True, kw_only=True)
class Tenths(Setting):
    """A number from ``low`` to ``high`` in steps of 0.1, as the sidebar's sliders take it."""

    low: float = 0.0
    high: float = 1.0
    kinds: ClassVar[tuple[type, ...]] = (int, float)
    described: ClassVar[str] = "a number"

    def checked(self, value: Any) -> str | None:
        if not self.low <= value <= self.high or abs(value * 10 - round(value * 10)) > 1e-9:
            return f"{quoted(value)} is not a multiple of 0.1 from {self.low} to {self.high}"
        return None


class Language(Setting):
    described: ClassVar[str] = "a language code"

    def options(self, step: Mapping[str, Any], shape: ModelShape) -> Sequence:
        return shape.targets


@dataclass(frozen=True, kw_only=True)
class Layer(Setting):
    """A layer counted from 1, of the kind of attention the page's setting ``kind_key`` names
    (``kind`` while it names none), or always of ``kind``; the page opens at the first layer,
    or the ``last``."""

    kind: str = "encoder"
    kind_key: str | None = None
    last: bool = False
    label: str = "Layer"
    in_presentation: bool = True
    kinds: ClassVar[tuple[type, ...]] = (int,)
    described: ClassVar[str] = "a layer number"

    def options(self, step: Mapping[str, Any], shape: ModelShape) -> Sequence | None:
        kind = step.get(self.kind_key, self.kind) if self.kind_key else self.kind
        if kind not in shape.layers:
            return None  # the kind itself is reported
        return range(1, shape.layers[kind] + 1)

    def default_of(self, options: Sequence) -> Any:
        return options[-1] if self.last else options[0]


@dataclass(frozen=True, kw_only=True)
class HeadNumber(Setting):
    """A head counted from 1, or "avg" (the mean of the heads) where the page offers it."""

    average: bool = False
    label: str = "Head"
    in_presentation: bool = True
    kinds: ClassVar[tuple[type, ...]] = (int, str)
    described: ClassVar[str] = "a head number"

    def options(self, step: Mapping[str, Any], shape: ModelShape) -> Sequence:
        return [*(["avg"] if self.average else []), *range(1, shape.heads + 1)]


@dataclass(frozen=True, kw_only=True)
class Snapshot(Setting):
    """A training step at which the model keeps a snapshot; the page opens at the final model,
    or the ``first`` snapshot."""

    first: bool = False
    label: str = "Training step"
    kinds: ClassVar[tuple[type, ...]] = (int,)
    described: ClassVar[str] = "a training step"

    def options(self, step: Mapping[str, Any], shape: ModelShape) -> Sequence:
        return shape.snapshots

    def default_of(self, options: Sequence) -> Any:
        return options[0] if self.first else options[-1]


@dataclass(frozen=True, kw_only=True)
class HeadNames(Setting):
    """Heads named as the Heads lab names them ("enc L5 H5"), a list."""

    default: tuple = ()
    kinds: ClassVar[tuple[type, ...]] = (list,)
    described: ClassVar[str] = 'a list of heads such as ["enc L5 H5"]'

    def options(self, step: Mapping[str, Any], shape: ModelShape) -> Sequence:
        return [
            Head(kind, layer, head).name
            for kind in KINDS
            for layer in range(shape.layers[kind])
            for head in range(shape.heads)
        ]

    def outside(self, value: Any, options: Sequence) -> str:
        return (
            f"{quoted(value)} is not a head of this model ({quoted(options[0])} to "
            f"{quoted(options[-1])})"
        )


@dataclass(frozen=True, kw_only=True)
class HeadName(HeadNames):
    """One head named as the Heads lab names it ("cross L2 H3")."""

    default: Any = None
    kinds: ClassVar[tuple[type, ...]] = (str,)
    described: ClassVar[str] = 'a head such as "enc L5 H5"'


def layer_or_mean(layer: int | str) -> str:
    """A layer as a picker of :class:`LayerOrMean` names it."""
    return "every layer (mean)" if layer == "mean" else f"layer {layer}"


@dataclass(frozen=True, kw_only=True)
class LayerOrMean(Layer):
    """A layer of ``kind`` counted from 1, or "mean": the mean of every layer, which the page
    opens at."""

    in_presentation: bool = False
    format: Callable[[Any], str] = layer_or_mean
    kinds: ClassVar[tuple[type, ...]] = (int, str)
    described: ClassVar[str] = 'a layer number or "mean"'

    def options(self, step: Mapping[str, Any], shape: ModelShape) -> Sequence | None:
        layers = super().options(step, shape)
        return None if layers is None else ["mean", *layers]

    def default_of(self, options: Sequence) -> Any:
        return "mean"


@dataclass(frozen=True, kw_only=True)
class Positions(Whole):
    """A number of positions, from ``low`` to the model's longest input; the page opens at
    ``default`` positions, or at that longest input if it is shorter."""

    def options(self, step: Mapping[str, Any], shape: ModelShape) -> Sequence | None:
        return None if shape.max_len is None else range(self.low, shape.max_len + 1)

    def default_of(self, options: Sequence) -> Any:
        return min(self.default, options[-1])


@dataclass(frozen=True, kw_only=True)
class Dimensions(Setting):
    """Dimensions of the model's d_model, counted from 0, a list; the page opens at 0, 1,
    d_model/4 and d_model/2."""

    kinds: ClassVar[tuple[type, ...]] = (list,)
    described: ClassVar[str] = "a list of dimensions such as [0, 1]"

    def options(self, step: Mapping[str, Any], shape: ModelShape) -> Sequence | None:
        return None if shape.d_model is None else range(shape.d_model)

    def checked(self, value: Any) -> str | None:
        wrong = [item for item in value if isinstance(item, bool) or not isinstance(item, int)]
        wrong += [item for item in value if isinstance(item, int) and item < 0]
        return f"{quoted(wrong[0])} is not a dimension" if wrong else None

    def default_of(self, options: Sequence) -> Any:
        return sorted({0, 1, len(options) // 4, len(options) // 2})


KIND = Choice(allowed=tuple(ATTENTION_KINDS), label="Attention", format=ATTENTION_KINDS.get)
SNAPSHOT = Snapshot(help="See the model as it was earlier in its training (its snapshots).")

# The sidebar's settings, which hold on every page: app/state.py's Settings
SIDEBAR: dict[str, Setting] = {
    "text": Text(label="English sentence", help="Ctrl+Enter or click outside to translate."),
    "to": Language(label="Translate into", default="de"),
    "beam": Whole(
        low=1,
        high=8,
        label="Beam size",
        default=PAPER_DECODING.beam_size,
        help="1 is greedy search.",
    ),
    "alpha": Tenths(
        low=0.0,
        high=2.0,
        label="Length penalty α",
        default=PAPER_DECODING.alpha,
        help="Hypotheses are ranked by log P / ((5 + length) / 6)^α; 0 ranks by log P.",
    ),
    "present": Flag(
        label="Presentation mode",
        help="For a projector: the sentence in large type, each figure fitted to the screen, the "
        "sidebar and the pages' controls hidden. Open the sidebar (») to leave it.",
    ),
}


@dataclass(frozen=True)
class Page:
    """A page of the app (app/views/<name>.py): its title and icon in the sidebar's navigation,
    and the settings it reads besides the sidebar's, by their widget keys."""

    title: str
    icon: str
    settings: Mapping[str, Setting] = field(default_factory=dict)


# The sidebar's sections: from the start, through the model's parts and its decoding, to what
# the heads do and how training shaped them
SECTIONS: dict[str, dict[str, Page]] = {
    "Start here": {
        "story": Page(
            "Story: start here",
            ":material/auto_stories:",
            {
                "story": Whole(
                    low=0,
                    high=len(STORY_STEPS) - 1,
                    label="Step",
                    format=STORY_CHAPTERS.__getitem__,
                )
            },
        ),
        "translate": Page(
            "Translate",
            ":material/translate:",
            {
                # any text, none included
                "ref": Setting(label="Reference translation (optional)", default=""),
                "snapshot": SNAPSHOT,
            },
        ),
    },
    "The model's anatomy": {
        "tokenization": Page("Tokenization", ":material/token:"),
        "embeddings": Page(
            "Embeddings & positional encoding",
            ":material/waves:",
            {
                "peorder": Choice(
                    allowed=tuple(PE_ORDERS),
                    label="Order of the dimensions in the heatmaps",
                    format=PE_ORDERS.get,
                    help="The paper interleaves them (even: sine, odd: cosine), which draws a "
                    "barcode; as two blocks each shows a smooth sweep from fast waves (left) to "
                    "slow ones (right).",
                ),
                "positions": Positions(low=16, default=100, label="Positions"),
                "dims": Dimensions(label="Dimensions to draw"),
                "escale": Choice(
                    allowed=tuple(EMBEDDING_SCALES),
                    label="Colour scale",
                    format=EMBEDDING_SCALES.get,
                ),
            },
        ),
        "attention": Page(
            "Attention",
            ":material/grid_on:",
            {
                "kind": KIND,
                "view": Choice(allowed=ATTENTION_VIEWS),
                "layer": Layer(kind_key="kind", last=True),
                "head": HeadNumber(average=True, default=1),
                "words": Flag(label="Merge pieces into words"),
                "snapshot": SNAPSHOT,
                # the row followed through scaled dot-product attention (One query, step by
                # step): a piece's row of the map, counted from 0 as its hover counts them; the
                # sentence decides which rows there are, so a row past its last is left unpicked
                "query": Whole(low=0, label="Query (a row of the map)"),
            },
        ),
        "masking": Page(
            "Masking",
            ":material/visibility_off:",
            {
                "other": Text(label="Second sentence", default="A dog runs."),
                "player": Layer(kind="encoder", label="Encoder layer"),
                "phead": HeadNumber(),
                "mkind": replace(KIND, default="decoder"),
                "mlayer": Layer(kind="decoder", kind_key="mkind"),
                "mhead": HeadNumber(),
                "scaled": Flag(
                    label="Divide by √d_k (the paper); off: the slides' unscaled version",
                    default=True,
                ),
            },
        ),
    },
    "Decoding": {
        "beam_search": Page(
            "Beam search",
            ":material/account_tree:",
            {
                "step": Whole(low=0, label="Step"),
                "xlayer": Layer(kind="cross", last=True),
                "xhead": HeadNumber(average=True),
            },
        ),
        "compare": Page(
            "Compare",
            ":material/compare:",
            {
                "compare_kind": replace(KIND, default="cross"),
                "a_layer": Layer(kind="cross", kind_key="compare_kind", last=True),
                "a_head": HeadNumber(average=True, default=1, format=average_named),
                "b_layer": Layer(kind="cross", kind_key="compare_kind", last=True),
                "b_head": HeadNumber(average=True, default=2, format=average_named),
                "language_layer": Layer(kind="cross", last=True),
                "language_head": HeadNumber(average=True, default="avg", format=average_named),
            },
        ),
    },
    "Analysis": {
        "head_lab": Page(
            "Heads lab",
            ":material/hub:",
            {
                "kind": KIND,
                # the word that attends and the one it looks at: a word of the sentence (its
                # position among the kind's words), so the sentence bounds them
                "focus": Whole(low=0, label="Word that attends"),
                "at_word": Whole(
                    low=0,
                    label="…looking at (optional)",
                    help="Pick the word it should find (for 'it': 'animal') to rank heads by the "
                    "weight on it.",
                ),
                # those the kind of attention has (self-attention has no diagonality)
                "stat": Choice(allowed=tuple(STATISTICS), label="Colour by", format=STATISTICS.get),
                "how": Choice(
                    allowed=tuple(INTERVENTIONS), label="Intervention", format=INTERVENTIONS.get
                ),
                "off": HeadNames(
                    label="Heads to change",
                    help="Off: the head's output is set to 0 before W^O (Michel et al. 2019). "
                    "Uniform: its weights become 1/n over the keys it may see (Wiegreffe & Pinter "
                    "2019). Shuffled: each row's weights are permuted among those keys (Jain & "
                    "Wallace 2019).",
                ),
            },
        ),
        "explain": Page(
            "Explain",
            ":material/psychology:",
            {
                # a row of the cross-attention (a produced piece), an alternative piece's id, the
                # translations' corresponding words and the sentences' shared words: what the
                # sentence allows; the page opens at the second piece, its likeliest alternative,
                # the first changed word and "it"
                "word": Whole(
                    low=0,
                    label="Produced piece to explain",
                    help="Each decoder position reads one piece and predicts the next.",
                ),
                "foil": Whole(
                    low=0,
                    label="Instead of",
                    help="The pieces the model found likeliest after the one it chose.",
                ),
                # its default is the cross head most focused for the word explained: the page's
                "probe": HeadName(label="Head"),
                "probe_how": Choice(
                    allowed=tuple(name for name in INTERVENTIONS if name != "off"),
                    label="Intervention",
                    format=INTERVENTIONS.get,
                ),
                # its default is the sentence's partner (core.inspection.partner): the page's
                "pair": Text(label="Second sentence"),
                "pair_word": Whole(
                    low=0,
                    label="Output word to compare",
                    help="Words of the two translations that correspond; a changed word shows "
                    "both forms.",
                ),
                "pair_layer": LayerOrMean(kind="cross", label=f"{ATTENTION_KINDS['cross']} of"),
                "follow": Whole(low=0, label="Word to follow"),
            },
        ),
        "coverage": Page(
            "Coverage",
            ":material/rule:",
            {
                "coverage_pieces": Flag(
                    label="Pieces instead of words",
                    help="In words, a row is an output word, so a word spelt in three pieces "
                    "counts once.",
                ),
                # a source word as "position: word", one of the sentence's
                "coverage_word": Setting(
                    label="Source word to follow",
                    help="The first flagged word is followed to begin with.",
                ),
            },
        ),
        "logit_lens": Page(
            "Logit lens",
            ":material/layers:",
            {
                "lens_sublayers": Flag(
                    label="Every sub-layer (self-attention, cross-attention, feed-forward)",
                    help="Off: the state after each whole layer. On: after each of its three "
                    "sub-layers.",
                ),
                # the output position picked, counted from 0 as the map's hover counts them; a
                # position past the translation's last is left unpicked on the page
                "lens_position": Whole(
                    low=0,
                    label="Output position",
                    help="Each decoder position reads one piece and predicts the next. The first "
                    "shown is the piece that became the first choice latest.",
                ),
                # its default is the layer where the chosen position's piece formed: the page's
                "lens_layer": Layer(
                    kind="decoder",
                    label="Layer whose parts to show",
                    format="layer {}".format,
                    help="The layer whose heads and feed-forward are shown below; at first, the "
                    "layer where the chosen position's piece became the first choice.",
                ),
            },
        ),
    },
    "Training": {
        "training": Page(
            "Training dynamics",
            ":material/timeline:",
            {
                "snapshot": Snapshot(first=True),  # Play and the forward keys go from there
                "kind": KIND,
                "layer": Layer(kind_key="kind", last=True),
                "head": HeadNumber(),
            },
        ),
        "model": Page("Model", ":material/info:"),
    },
}
# Every page, by its name (its file under app/views/, its URL path), in the sidebar's order
PAGES: dict[str, Page] = {name: page for pages in SECTIONS.values() for name, page in pages.items()}
START = "story"  # the page the app opens at, whose URL path is ""


def settings_of(page: str) -> dict[str, Setting]:
    """Every setting of ``page``: the sidebar's and the page's own."""
    return {**SIDEBAR, **PAGES[page].settings}
