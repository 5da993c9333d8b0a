"""The Heads lab draws the head survey (heads.json) the core computed, and says when the model has
changed since. Moved from tests/core/test_head_survey.py; the survey is the ``surveyed`` fixture
of tests/conftest.py."""

import shutil

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from core.files.checkpoint import load_model, save_model
from core.files.model_dir import HEADS_FILE, MODEL_FILE
from core.inspection.head_survey import save_survey
from tests.app.apptest import MAIN, chart_specs, plotted


@pytest.mark.slow
def test_the_heads_lab_draws_the_survey_and_says_when_it_is_stale(
    surveyed, tiny_model_dir, tmp_path, monkeypatch
):
    model_dir = tmp_path / "model"
    shutil.copytree(tiny_model_dir, model_dir)
    save_survey(model_dir / HEADS_FILE, surveyed)
    monkeypatch.setenv("ATTENTION_LAB_MODEL", str(model_dir))
    at = AppTest.from_file(MAIN, default_timeout=120)
    at.query_params.update({"over": "sample", "kind": "cross"})
    at.switch_page("views/head_lab.py")
    at.run()
    assert not at.exception, [error.message for error in at.exception]
    specs = {spec["layout"]["title"]["text"]: spec for spec in chart_specs(at)}
    dashboard = next(spec for title, spec in specs.items() if title.startswith("Cross-attention: "))
    statistic = at.segmented_control(key="stat").value
    np.testing.assert_allclose(
        plotted(dashboard["data"][0]["z"]), surveyed.statistics["cross"][statistic]
    )
    curve = next(spec for title, spec in specs.items() if "validation sentences" in title)
    assert list(plotted(curve["data"][0]["x"])) == [point.heads_off for point in surveyed.pruning]
    np.testing.assert_allclose(
        plotted(curve["data"][0]["y"]), [point.bleu for point in surveyed.pruning]
    )
    assert not [warning for warning in at.warning if "earlier model" in warning.value]
    model = load_model(model_dir / MODEL_FILE)[0]
    with torch.no_grad():
        model.embedding.weight[5] += 1.0
    save_model(model, model_dir / MODEL_FILE)
    at.run()
    assert [warning for warning in at.warning if "earlier model" in warning.value]
