r"""Page 8 (ALiBi): figure builders, live checks and URL state, without a browser."""

from __future__ import annotations

import numpy as np
import plotly.io as pio
import pytest

from posenc_ui.lessons.alibi.view import (
    VIEW,
    bias_figure,
    check_forms,
    check_slopes,
    field_figure,
    forms_figure,
    shown_heads,
    slopes_figure,
    weights_figure,
)
from posenc_ui.state import defaults

DEFAULTS = defaults(VIEW.params)


@pytest.mark.parametrize("n_heads", [1, 8, 12, 20, 96, 128])
def test_slopes_figure_has_every_head_and_the_check_passes(n_heads: int) -> None:
    fig = slopes_figure({**DEFAULTS, "n_heads": n_heads}, "en")
    assert sum(len(trace.x) for trace in fig.data) == n_heads
    # Two traces at any head count (an exported slider over n_heads swaps their data); the in-between slopes are empty
    # and out of the legend for a power of two.
    power_of_two = n_heads & (n_heads - 1) == 0
    assert len(fig.data) == 2 and (len(fig.data[1].x) == 0) == power_of_two and fig.data[1].showlegend != power_of_two
    assert check_slopes({"n_heads": n_heads}).passed


def test_bias_panels_one_per_picked_head_with_the_future_blank() -> None:
    fig = bias_figure({**DEFAULTS, "heads": (0, 7), "length": 8}, "en")
    assert len(fig.data) == 2
    z = np.asarray(fig.data[0].z, dtype=float)
    assert np.isnan(z[0, 1]) and z[3, 1] == -0.5 * 2  # head 0, m = 1/2, distance 2
    symmetric = np.asarray(bias_figure({**DEFAULTS, "heads": (0,), "causal": False}, "en").data[0].z)
    assert np.allclose(symmetric, symmetric.T)


def test_weights_panels_start_with_no_bias_and_rows_sum_to_one() -> None:
    fig = weights_figure({**DEFAULTS, "length": 16}, "zh")
    assert len(fig.data) == 1 + len(DEFAULTS["heads"])
    for trace in fig.data:
        assert np.allclose(np.asarray(trace.z, dtype=float).sum(axis=1), 1.0, atol=1e-6)


def test_receptive_field_grows_as_the_slope_falls() -> None:
    bars = np.asarray(field_figure({**DEFAULTS, "threshold": 4}, "en").data[0].y)
    assert np.allclose(bars, 4 * 2.0 ** (np.arange(1, 9)))  # τ/m with m = 2^-(h+1)


def test_forms_differ_by_a_constant_per_row_and_the_check_passes() -> None:
    fig = forms_figure({**DEFAULTS, "length": 12}, "en")
    gap = np.asarray(fig.data[2].z, dtype=float)
    rows = [row[~np.isnan(row)] for row in gap]
    assert all(np.ptp(row) < 1e-6 for row in rows)
    assert check_forms({**DEFAULTS, "n_heads": 20, "heads": (0, 16, 19), "length": 64, "seed": 3}).passed


def test_no_picked_head_falls_back_to_head_0() -> None:
    assert shown_heads({"heads": ()}) == (0,)


def test_payload_at_max_settings_stays_under_1_mb() -> None:
    values = {**DEFAULTS, "n_heads": 128, "heads": (0, 40, 90, 127), "length": 512, "threshold": 16}
    for name, build in VIEW.figures.items():
        assert len(pio.to_json(build(values, "en"), validate=False)) < 1_000_000, name


def test_deep_link_with_twelve_heads(open_page) -> None:
    at = open_page("pages/8_ALiBi.py", lang="en", params={"n_heads": "12", "heads": "8,11", "causal": "0"})
    assert not at.exception and not at.warning
    assert at.multiselect(key="alibi.heads").value == [8, 11]
    assert all(box.value.startswith("✓") for box in at.success if box.value[:1] in "✓✗")
