"""Model: the architecture, the model card (data, scores) and the training curves."""

from pathlib import PurePath

import streamlit as st

from app import state, ui
from app.figures.training import training_curves
from app.figures.training_log import card_facts, series, training_log
from core import LANGUAGES
from core.files import METRICS_FILE, ModelDir, beyond_the_paper


def started_from(training: dict) -> str | None:
    """The model a continued run started from, as the card gives it ({"name", "step"}, or a
    directory with the steps before the run): its name and step, never the path of the machine
    that trained it (only its last part)."""
    start = training.get("initialised_from")
    if not start:
        return None
    if isinstance(start, dict):
        name, step = start.get("name"), start.get("step")
    else:
        name, step = PurePath(str(start)).name, training.get("steps_before")
    return f"{name}, step {step:,}" if isinstance(step, int) else str(name)


st.title("Model")
translator = state.translator()
config = translator.model.config
card = translator.card
path = state.model_dir()
directory = ModelDir(path)
st.subheader(str(card.get("name") or path.name))
if card.get("description"):
    st.text(str(card["description"]))
st.caption(f"Loaded from `{path}`")
# presentation mode: the training curves, the page's figure, first, on screen without scrolling
# (the facts and tables below them)
lead = st.container()

st.header("Architecture")
st.markdown(
    "An encoder-decoder Transformer as in the paper: "
    + ("pre-LN" if config.norm_first else "post-LN (the paper's)")
    + " residual blocks, sinusoidal positions, one embedding matrix shared by the encoder, the "
    "decoder and the output projection."
)
if beyond_the_paper(config):  # a model trained elsewhere, such as a MarianMT model
    st.markdown("Beyond the paper: " + "; ".join(beyond_the_paper(config)) + ".")
facts = {
    "parameters": f"{translator.model.num_parameters():,}",
    "encoder layers": config.n_encoder_layers,
    "decoder layers": config.n_decoder_layers,
    "heads": config.n_heads,
    "d_model": config.d_model,
    "d_k = d_model / heads": config.d_k,
    "d_ff": config.d_ff,
    "vocabulary": f"{config.vocab_size:,}",
    "longest input": f"{translator.max_source_tokens} pieces",  # longer sentences are cut
}
columns = st.columns(5)
for i, (name, value) in enumerate(facts.items()):
    columns[i % 5].metric(name, value)

st.header("Training data")
data = card.get("data") or []
if data:
    ui.table(data)
else:
    st.info("The model card lists no training data.")
training = card.get("training") or {}
if training.get("initialised_from"):
    training = {**training, "initialised_from": started_from(training)}
if training:
    ui.table(card_facts(training))

st.header("Scores")
scores = card.get("scores") or []
if scores:
    ui.table(scores, {"bleu": "%.1f", "chrf": "%.1f"})
else:
    st.info("The model card reports no test scores.")

with lead if state.settings().present else st.container():
    st.header("Training curves")
    train, val = training_log(directory.metrics_file)
    scores = {}  # the log may hold per-language scores (val_bleu_de...) beside the averages
    for metric in ("BLEU", "chrF"):
        scores[metric] = series(val, f"val_{metric.lower()}")
        for lang in LANGUAGES:
            scores[f"{metric} en→{lang}"] = series(val, f"val_{metric.lower()}_{lang}")
    panels = {
        "loss": {"train": series(train, "train_loss"), "validation": series(val, "val_loss")},
        "validation BLEU / chrF": scores,
        "learning rate": {"lr": series(train, "lr")},
        "tokens / second": {"tokens/s": series(train, "tokens_per_s")},
    }
    panels = {title: {n: p for n, p in lines.items() if p[0]} for title, lines in panels.items()}
    panels = {title: lines for title, lines in panels.items() if lines}
    if panels:
        ui.chart(training_curves(panels), "training")
    else:
        st.info(f"No training log ({METRICS_FILE}) next to this model.")

card_text = directory.read_card_text()
if card_text is not None:
    with st.expander("The full model card"):
        st.markdown(card_text)
