r"""Page 10: the table's live columns, the lab loader's alignment, the small multiples, the page in AppTest."""

from __future__ import annotations

import json

import numpy as np

from posenc_core.compare_analysis import COMPARED
from posenc_ui.state import defaults
from posenc_ui.views.compare import LAB_RESULTS, VIEW, comparison_table, lab_excess

SCRIPT = "pages/10_Compare.py"


def test_table_marks_relative_and_absolute_from_live_residuals() -> None:
    table = comparison_table(defaults(VIEW.params), "en")
    lines = {line.split("|")[1].strip(" *"): line for line in table.splitlines()[2:]}
    assert set(lines) == {"sinusoidal", "learned", "Shaw relative", "T5 bias", "RoPE", "ALiBi"}
    for name in ("Shaw relative", "T5 bias", "RoPE", "ALiBi"):
        assert "✓ relative" in lines[name]
    for name in ("sinusoidal", "learned"):
        assert "✗ absolute" in lines[name]
    assert "✓ 0.00" in lines["ALiBi"] and "Extrapolation_lab?lang=en" in lines["ALiBi"]
    assert "not in the lab" in lines["Shaw relative"]


def test_lab_excess_compares_loss_t_with_optimum_t_plus_1() -> None:
    results = json.loads(LAB_RESULTS.read_text())
    excess, train_length = lab_excess()
    loss = np.asarray(results["runs"]["rope"]["loss"])
    optimal = np.asarray(results["optimal_loss"])
    beyond = np.mean(loss[train_length - 1 :] - optimal[train_length:])
    assert train_length == results["config"]["train_length"] and excess["rope"].beyond == beyond
    assert excess["alibi"].beyond < 0.05 < min(x.beyond for e, x in excess.items() if e != "alibi")


def test_small_multiples_have_one_panel_per_encoding_at_screen_resolution() -> None:
    fig = VIEW.figures["matrices"]({"length": 256}, "en")
    assert len(fig.data) == len(COMPARED)
    assert all(np.asarray(trace.z).size <= 96 * 96 for trace in fig.data)


def test_page_shows_the_table_and_passing_checks(open_page) -> None:
    at = open_page(SCRIPT, lang="zh")
    assert not at.exception
    assert any("Toeplitz" in md.value and "✓" in md.value for md in at.markdown)
    at.slider(key="compare.length").set_value(256).run()
    assert not at.exception and all(box.value.startswith("✓") for box in at.success)
