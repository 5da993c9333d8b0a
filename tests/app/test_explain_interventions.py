"""The Explain page shows what an intervention on a head does to one word: the shift of its
distribution and the new translation, as core computes them. Moved from
tests/core/test_interventions.py, which tests the interventions themselves."""

import pytest
from streamlit.testing.v1 import AppTest

from core.inspection.ablation import Head, distribution_shift, intervened_translator
from tests.app.apptest import MAIN
from tests.conftest import TINY


@pytest.mark.slow
def test_the_explain_page_shows_what_an_intervention_does_to_one_word(
    tiny_model_dir, translator, monkeypatch
):
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(tiny_model_dir))
    text = "The dog runs in the park."
    at = AppTest.from_file(MAIN, default_timeout=120)
    at.query_params["text"] = text
    at.switch_page("views/explain.py")
    at.run()
    at.selectbox(key="word").set_value(2).run()
    at.selectbox(key="probe").set_value("enc L2 H3").run()
    at.segmented_control(key="probe_how").set_value("uniform").run()
    assert not at.exception, [error.message for error in at.exception]
    normal = translator.translate(text, "de", 4, 0.6)
    changed = intervened_translator(translator, [Head("encoder", 1, 2)], "uniform")
    vocabulary = translator.tokenizer.pieces(range(TINY.vocab_size))
    position = at.selectbox(key="word").value
    before, after = translator.predictions(normal)[position], changed.predictions(normal)[position]
    shift = distribution_shift(before, after, vocabulary)
    assert shift.total_variation > 0
    assert at.metric[0].value == f"{shift.total_variation:.3f}"
    retranslated = changed.translate(text, "de", 4, 0.6).text
    assert retranslated != normal.text and retranslated in [code.value for code in at.code]
