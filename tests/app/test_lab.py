r"""Page 9, the extrapolation lab: committed results, the gap table and checks, the store, and a real live run."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from posenc_core.lab_task import PRESETS, optimal_loss
from posenc_ui.views import lab
from posenc_ui.views.lab import ENCODING_SETS, ResultStore, committed, gaps, live_config

SCRIPT = "pages/9_Extrapolation_lab.py"


def fake_results(losses: dict[str, float], *, length: int = 4, factor: int = 4) -> dict:
    r"""A results dict with constant loss per encoding and an optimum of 0.5 after the lag."""
    config = dataclasses.asdict(dataclasses.replace(PRESETS["cpu"], train_length=length, eval_factor=factor, lag=1))
    optimum = np.full(length * factor, 0.5)
    optimum[0] = math.log(16)
    runs = {name: {"loss": [0.5 + gap] * (length * factor - 1), "accuracy": [0.0] * (length * factor - 1),
                   "train_loss": [1.0], "tokens_per_second": 1000.0} for name, gap in losses.items()}  # fmt: skip
    return {"config": config, "optimal_loss": optimum.tolist(), "runs": runs}


def test_committed_results_match_the_preset_they_were_made_with():
    results = committed()
    config = results["config"]
    assert set(results["runs"]) == set(ENCODING_SETS["all"])
    assert results["optimal_loss"] == pytest.approx(optimal_loss(PRESETS["cpu"], config["eval_factor"] * 32).tolist())
    assert "--preset cpu" in results["command"]


def test_gaps_are_measured_per_band_against_the_optimum():
    table = gaps(fake_results({"learned": 0.0, "alibi": 2.0}, length=4, factor=4))
    assert list(table["learned"]) == ["inside", "1-2", "2-4"]
    assert table["learned"]["inside"] == pytest.approx(0.0)
    assert table["alibi"]["2-4"] == pytest.approx(2.0)


def test_the_committed_run_passes_both_checks():
    values = {"source": "committed", "metric": "loss", "set": "all", "train_length": 32, "steps": 300, "seed": 0}
    inside, beyond = lab.check_inside(values), lab.check_extrapolation(values)
    assert inside.passed and inside.residual < 0.25
    assert beyond.passed and beyond.residual > 1.0


def test_store_keeps_the_most_recent_runs_only():
    store = ResultStore(size=2)
    configs = [dataclasses.replace(PRESETS["cpu"], seed=s) for s in range(3)]
    for n, config in enumerate(configs):
        store.put(config, {"n": n})
    assert store.get(configs[0]) is None
    assert store.get(configs[1]) == {"n": 1}
    assert store.latest() == {"n": 1}  # reading made it the most recent


def test_page_shows_committed_results_and_no_live_notice_by_default(open_page):
    at = open_page(SCRIPT, lang="en")
    assert not at.exception
    assert not [i for i in at.info if "not been run" in i.value]
    assert [b for b in at.button if b.label == "Run"]


def test_live_source_without_a_run_says_so(open_page):
    at = open_page(SCRIPT, lang="zh", params={"source": "live", "seed": "7"})
    assert not at.exception
    assert any("还没有" in i.value for i in at.info)


@pytest.mark.slow
def test_a_live_run_trains_stores_and_switches_the_page_to_it(open_page):
    params = {"set": "contrast", "train_length": "16", "steps": "50", "seed": "3"}
    at = open_page(SCRIPT, lang="en", params=params)
    values = {"source": "live", "metric": "loss", "set": "contrast", "train_length": 16, "steps": 50, "seed": 3}
    assert lab.STORE.get(live_config(values)) is None
    next(b for b in at.button if b.label == "Run").click()
    at.run(timeout=240)
    assert not at.exception
    results = lab.STORE.get(live_config(values))
    assert results is not None and set(results["runs"]) == {"learned", "alibi"}
    assert at.session_state["lab.source"] == "live"
    assert any("have been trained" in s.value for s in at.success)
