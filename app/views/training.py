"""Training dynamics: the model at earlier steps of its training, on the sentence in the sidebar,
so that heads can be seen learning their jobs."""

import streamlit as st

from app import controls, lectern, presentation, snapshot_cache, state, ui
from app.display import ATTENTION_KINDS
from app.figures.heatmaps import attention_map
from app.figures.training import training_curves
from app.numbering import index_of
from core.files import MODEL_FILE, SNAPSHOT_DIR, ModelDir
from core.inspection import (
    SnapshotView,
    head_dynamics,
    training_record,
    vocabulary_change,
)

PLAY_INTERVAL_S = 1.2  # seconds per snapshot while the training plays
LOSS_HELP = "Label-smoothed cross-entropy per target token, from the training log at this step."
BLEU_HELP = "sacreBLEU on the run's validation sample at this step, from the training log."
LOG_PROB_HELP = (
    "How likely this snapshot finds the final model's translation: the sum of the natural-log "
    "probabilities of its pieces, in nats. It rises towards the final model's own score."
)
DYNAMICS_HELP = (
    "Computed on your sentence at every snapshot (dotted line: the step shown). Entropy of the "
    "attention rows (Clark et al. 2019) falls as a head focuses; confidence, the mean of each "
    "row's largest weight excluding </s> (Voita et al. 2019), rises. For cross-attention, "
    "diagonality measures how close the weight lies to the diagonal of the target x source "
    "rectangle: an alignment-like head, as in word alignment, scores near 1."
)

PAGE = "training"  # its settings: app/page_settings.py

st.title("Training dynamics: watch attention being learned")
state.translator()  # says so if there is no model
if not ModelDir(state.model_dir()).snapshots():
    st.info(
        f"This model keeps no snapshots of its training ({SNAPSHOT_DIR}/ beside {MODEL_FILE}); "
        "a model trained elsewhere, such as a MarianMT model from Hugging Face, has none, and "
        "this page cannot apply to it."
    )
    st.stop()
analysis = state.analysis()
views = snapshot_cache.snapshot_views()
steps = [view.step for view in views]
st.markdown(
    f"The model was saved at {len(steps) - 1} steps of its training before the last. Each "
    "snapshot translates your sentence on its own; its attention is shown on the **final** "
    "model's translation (teacher forcing), so every step's map has the same rows and columns "
    "and one colour scale. Early snapshots babble; watch when the heads find their jobs."
)
if st.session_state.get("snapshot", steps[0]) not in steps:  # a step of another model
    del st.session_state["snapshot"]


playing = lectern.play_toggle("▶ Play the training", "train_play", "snapshot", steps)
lectern.keys("earlier", "later")
kind = controls.pick(PAGE, "kind")
left, right = st.columns([2, 3])
with left:
    layer = controls.pick(PAGE, "layer")
with right:
    head = controls.pick(PAGE, "head")


def snapshot_numbers(step: int, view: SnapshotView) -> None:
    """The snapshot's step, loss, score and validation BLEU, and its translation beside the final
    model's."""
    record = training_record(state.model_dir(), step)
    columns = st.columns(4)
    columns[0].metric("Step", f"{step:,}", help="Optimizer updates so far.")
    if record.train_loss is not None:
        columns[1].metric("Training loss", f"{record.train_loss:.2f}", help=LOSS_HELP)
    columns[2].metric("log P(final translation)", f"{view.forced.log_prob:.1f}", help=LOG_PROB_HELP)
    if record.validation and f"val_bleu_{view.translation.target}" in record.validation:
        bleu = record.validation[f"val_bleu_{view.translation.target}"]
        columns[3].metric("Validation BLEU", f"{bleu:.1f}", help=BLEU_HELP)
    else:
        columns[3].caption("No validation was logged at this step.")
    change = vocabulary_change(state.model_dir())
    if change and step <= change.at_step:
        st.caption(
            f"Until step {change.at_step:,} the model had a {change.old_vocab_size:,}-piece "
            f"vocabulary. This snapshot is moved onto today's {change.new_vocab_size:,} pieces "
            "(its layers as trained, each new piece's embedding the mean of the old pieces that "
            "spell it), so it reads your sentence in pieces it never trained on."
        )
    st.caption("This snapshot translates:")
    st.text(view.translation.text or "(nothing: it says </s> at once)")
    st.caption("The final model translates:")
    st.text(analysis.result.text)


def snapshot_view() -> None:
    if playing:
        lectern.play_on("snapshot", steps)
    with ui.step_buttons("snapshot", steps, {"earlier": "◀ Earlier", "later": "Later ▶"}):
        step = st.select_slider(
            controls.setting(PAGE, "snapshot").label,
            steps,
            value=controls.default(PAGE, "snapshot"),
            key="snapshot",
            bind="query-params",
            format_func="{:,}".format,
        )
    view = views[steps.index(step)]
    presenting = state.settings().present
    if not presenting:
        snapshot_numbers(step, view)
    attention = getattr(view.forced.attention, kind)
    title = f"Step {step:,}: {ATTENTION_KINDS[kind]}, layer {layer}, head {head}"
    name = f"training-step-{step}"
    ui.chart(
        attention_map(attention, index_of(layer), index_of(head), title),
        name,
        caption=ui.sentence_caption(kind=kind, layer=layer, head=head, training_step=step),
    )
    if presenting:  # the map first, below two rows of controls (layer and head, the steps)
        st.html(presentation.controls_above(name, 1))
        snapshot_numbers(step, view)
    dynamics = head_dynamics(views, kind)
    panels = {
        "Entropy (nats), lower = more focused": {
            f"L{layer} H{head}": (steps, dynamics.entropy[:, index_of(layer), index_of(head)])
        },
        "Confidence (top weight, not </s>)": {
            f"L{layer} H{head}": (steps, dynamics.confidence[:, index_of(layer), index_of(head)])
        },
    }
    if dynamics.diagonality is not None:
        panels["Diagonality, most diagonal head per layer"] = {
            f"layer {n}": (steps, dynamics.diagonality[:, index_of(n)].max(axis=1))
            for n in controls.options(PAGE, "layer")
        }
    ui.chart(training_curves(panels, mark_step=step, log_steps=True), "head-dynamics")
    st.caption(DYNAMICS_HELP)


ui.playable(snapshot_view, playing, PLAY_INTERVAL_S)
