"""A deck file (app/deck.py): read, checked against a model's shape with every problem named by
its step and setting, written back as TOML; the shipped deck walks the paper on the shipped
model."""

from pathlib import Path

import pytest

from app import deck
from app.page_settings import ModelShape
from core import DEFAULT_MODEL
from core.files.model_dir import ModelDir

VIEWS = Path(deck.__file__).parent / "views"
SHAPE = ModelShape.of(6, 6, 8, ["de", "fr"], [100, 1000, 10000, 30893, 85840])


def shipped_shape() -> ModelShape:
    """The shipped model's shape, from its card and its snapshots, as the app reads them."""
    directory = ModelDir(DEFAULT_MODEL)
    card = directory.read_card()
    config = card["config"]
    return ModelShape.of(
        config["n_encoder_layers"],
        config["n_decoder_layers"],
        config["n_heads"],
        card["languages"]["targets"],
        [snapshot.step for snapshot in directory.snapshots()],
        d_model=config["d_model"],
        max_len=config["max_len"],
    )


def problems(text: str, shape: ModelShape = SHAPE) -> list[str]:
    with pytest.raises(deck.DeckError) as raised:
        deck.parse(text, shape)
    return raised.value.problems


def test_the_shipped_deck_walks_the_paper_on_the_shipped_model():
    shape = shipped_shape()
    assert shape.layers == {"encoder": 6, "decoder": 6, "cross": 6} and shape.heads == 8
    lecture = deck.parse(deck.read("paper"), shape)  # raises on any layer, head or step it lacks
    steps = lecture.steps
    assert 18 <= len(steps) <= 24
    assert all(step.title and step.settings["present"] is True for step in steps)
    assert all((VIEWS / f"{step.page}.py").is_file() for step in steps)

    def named(page: str, **settings) -> list[deck.Step]:
        return [
            step
            for step in steps
            if step.page == page
            and all(step.settings.get(key) == value for key, value in settings.items())
        ]

    assert named("tokenization") and named("embeddings")  # pieces, positional encodings
    assert named("story", story=2) and named("attention", kind="encoder")  # self-attention
    assert named("story", story=3)  # the causal mask
    assert named("attention", view="All layers and heads")  # multi-head
    assert named("attention", kind="cross") and named("attention", to="fr")  # cross-attention
    assert len({step.settings["step"] for step in named("beam_search")}) >= 2  # search steps
    assert any(step.settings.get("off") for step in named("head_lab"))  # a head switched off
    snapshots = [step.settings["snapshot"] for step in named("training")]
    assert snapshots == sorted(snapshots) and len(snapshots) >= 3  # attention being learned
    assert snapshots[-1] == shape.snapshots[-1]


def test_a_deck_sets_every_step_its_settings_and_a_step_overrides_them():
    lecture = deck.parse(
        """
        title = "Two views"
        [settings]
        text = "A dog runs."
        present = true
        [[step]]
        page = "attention"
        head = "avg"
        [[step]]
        title = "French"
        page = "story"
        to = "fr"
        present = false
        story = 4
        """,
        SHAPE,
    )
    assert lecture.title == "Two views"
    first, second = lecture.steps
    assert first == deck.Step("attention", {"text": "A dog runs.", "present": True, "head": "avg"})
    assert second.title == "French"
    assert second.settings == {"text": "A dog runs.", "to": "fr", "present": False, "story": 4}


def test_a_step_written_as_toml_reads_back_the_same():
    steps = [
        deck.Step(
            "head_lab",
            {
                "text": 'She said "hi"\\ and\tleft —\nthen “it” came back.',
                "to": "fr",
                "beam": 2,
                "alpha": 1.0,
                "present": False,
                "kind": "cross",
                "how": "uniform",
                "off": ["enc L1 H1", "cross L6 H8"],
            },
            "A head switched off: “cross L6 H8”",
        ),
        deck.Step("attention", {"head": "avg", "words": True, "view": "All layers and heads"}),
        deck.Step("masking", {"alpha": 0.6, "mkind": "encoder", "mlayer": 6, "scaled": False}),
    ]
    text = 'title = "Lecture"\n'
    for step in steps:
        text = deck.with_step(text, step)
    assert deck.parse(text, SHAPE).steps == tuple(steps)


def test_the_view_on_screen_keeps_its_pages_settings_only():
    values = {"text": "A dog runs.", "to": "de", "layer": 3, "mlayer": 2, "story": 1, "head": None}
    step = deck.current_step("attention", values, "Attention")
    assert step == deck.Step(
        "attention", {"text": "A dog runs.", "to": "de", "layer": 3}, "Attention"
    )
    assert deck.parse(deck.with_step("", step), SHAPE).steps == (step,)


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        ('page = "attention"\nlayer = 7', "Step 1 (attention), layer: 7 is not one of 1 to 6."),
        ('page = "attention"\nlayer = true', "Step 1 (attention), layer: true is not a layer"),
        ('page = "training"\nhead = "avg"', 'Step 1 (training), head: "avg" is not one of 1 to 8.'),
        ('page = "attention"\nhead = 9', "Step 1 (attention), head: 9 is not one of "),
        ('page = "attention"\nwords = "yes"', 'words: "yes" is not true or false.'),
        ('page = "attention"\nkind = "self"', 'kind: "self" is not one of "encoder", "decoder"'),
        ('page = "attention"\nview = "grid"', 'view: "grid" is not one of "One head"'),
        ('page = "training"\nsnapshot = 5', "snapshot: 5 is not one of 100, 1000, 10000,"),
        ('page = "story"\nstory = 6', "Step 1 (story), story: 6 is not one of 0 to 5."),
        ('page = "beam_search"\nstep = -1', "Step 1 (beam_search), step: -1 is below 0."),
        ('page = "translate"\nto = "es"', 'to: "es" is not one of "de", "fr".'),
        ('page = "translate"\nbeam = 0', "beam: 0 is not one of 1 to 8."),
        (
            'page = "translate"\nalpha = 0.65',
            "alpha: 0.65 is not a multiple of 0.1 from 0.0 to 2.0",
        ),
        ('page = "translate"\ntext = "  "', "Step 1 (translate), text: the text is empty."),
        ('page = "head_lab"\noff = ["enc L7 H1"]', '"enc L7 H1" is not a head of this model'),
        ('page = "head_lab"\noff = "enc L1 H1"', 'off: "enc L1 H1" is not a list of heads'),
        (
            'page = "masking"\nlayer = 2',
            'Step 1 (masking): the masking page reads no setting "layer"',
        ),
        ('page = "attn"', 'Step 1: page "attn" is not a page; the pages are story, translate,'),
        ('title = "no page"', "Step 1: page (missing) is not a page"),
        ('page = "model"\ntitle = 3', "Step 1 (model), title: write it as text in quotes."),
    ],
)
def test_a_problem_is_named_by_its_step_and_setting(step, expected):
    found = problems(f"[[step]]\n{step}\n")
    assert len(found) == 1 and expected in found[0], found


def test_a_layer_is_checked_against_the_kind_of_attention_the_step_shows():
    shallow_decoder = ModelShape.of(6, 3, 8, ["de"])
    deck.parse('[[step]]\npage = "masking"\nmkind = "encoder"\nmlayer = 5', shallow_decoder)
    found = problems('[[step]]\npage = "masking"\nmlayer = 5', shallow_decoder)  # decoder: default
    assert found == ["Step 1 (masking), mlayer: 5 is not one of 1 to 3."]
    found = problems('[[step]]\npage = "beam_search"\nxlayer = 4', shallow_decoder)
    assert found == ["Step 1 (beam_search), xlayer: 4 is not one of 1 to 3."]


def test_a_snapshot_on_a_model_without_snapshots_is_named():
    found = problems('[[step]]\npage = "training"\nsnapshot = 100', ModelShape.of(1, 1, 1, ["de"]))
    assert found == ["Step 1 (training), snapshot: 100 cannot be shown: this model offers none."]


def test_every_problem_of_a_deck_is_named_at_once():
    found = problems(
        """
        title = 3
        author = "me"
        [settings]
        beam = 9
        layer = 2
        [[step]]
        page = "attention"
        layer = 0
        [[step]]
        page = "compare"
        a_head = "avg"
        b_layer = 8
        """
    )
    assert found == [
        '"author" is not part of a deck; it holds title, [settings] and [[step]] tables.',
        "title: write it as text in quotes.",
        "[settings], beam: 9 is not one of 1 to 8.",
        '[settings]: "layer" is not a sidebar setting; they are text, to, beam, alpha, present '
        "(a page's settings go in its steps).",
        "Step 1 (attention), layer: 0 is not one of 1 to 6.",
        "Step 2 (compare), b_layer: 8 is not one of 1 to 6.",
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('[[step]\npage = "x"', "The file is not valid TOML: "),
        ('title = "empty"', "The deck has no steps"),
        ("step = 3", "The deck has no steps"),
        ("step = [3]", "Step 1: write it as a [[step]] table."),
        ('settings = 3\n[[step]]\npage = "model"', "[settings]: write it as a table"),
    ],
)
def test_a_malformed_deck_file_is_a_message(text, expected):
    assert problems(text)[0].startswith(expected)


@pytest.mark.parametrize(
    "name", ["/etc/passwd", "../.streamlit/secrets.toml", "talks/intro.toml", "..", ".hidden", ""]
)
def test_a_deck_is_a_name_in_the_decks_folder_never_a_path(tmp_path, name):
    with pytest.raises(deck.DeckError, match=r"is not a deck's name: a deck is a \.toml file of"):
        deck.locate(name, tmp_path)


def test_a_lecturers_own_folder_of_decks_replaces_the_shipped_one(tmp_path, monkeypatch):
    (tmp_path / "mine.toml").write_text('[[step]]\npage = "model"\n', encoding="utf-8")
    assert "paper" in deck.names() and deck.decks_folder() == deck.SHIPPED_FOLDER
    monkeypatch.setenv(deck.FOLDER_ENV, str(tmp_path))
    assert deck.names() == ["mine"] and deck.locate("mine") == tmp_path / "mine.toml"
    with pytest.raises(deck.DeckError, match="holds mine"):
        deck.read("paper")


def test_a_deck_is_read_by_its_name_with_or_without_its_suffix(tmp_path):
    (tmp_path / "intro.toml").write_text('[[step]]\npage = "model"\n', encoding="utf-8")
    assert deck.locate("intro", tmp_path) == tmp_path / "intro.toml"
    assert deck.locate("intro.toml", tmp_path) == tmp_path / "intro.toml"
    assert deck.names(tmp_path) == ["intro"]
    assert deck.read("intro", tmp_path) == '[[step]]\npage = "model"\n'
    with pytest.raises(deck.DeckError) as raised:
        deck.read("outro", tmp_path)
    assert raised.value.problems == [
        f'No deck "outro" can be read (FileNotFoundError); {tmp_path.name}/ holds intro.'
    ]
    assert "paper" in deck.names()  # the shipped one, in decks/
