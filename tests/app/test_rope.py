r"""Page 6 (RoPE): the figure builders as pure functions, the view's checks at the slider extremes, the page itself."""

from __future__ import annotations

import math

import numpy as np
import plotly.io as pio
import pytest
from drawn import sent_charts, shown_checks

from posenc_ui.lessons.rope import figures as figs
from posenc_ui.lessons.rope import view as rope
from posenc_ui.lessons.rope.view import VIEW
from posenc_ui.state import defaults

SCRIPT = "pages/6_RoPE.py"
DEFAULTS = defaults(VIEW.params)
MAXIMAL = dict(
    DEFAULTS, dim=512, base=1e7, pairs=(0, 1, 2, 100, 200, 255), m=4096, n=4096, seed=99, lookback=64, tolerance=30
)


def tips(trace_x: np.ndarray, trace_y: np.ndarray) -> np.ndarray:
    r"""(P, 2) hand vectors (tip − centre) of a hands trace drawn as centre, tip, gap per clock."""
    x, y = np.asarray(trace_x, dtype=float), np.asarray(trace_y, dtype=float)
    return np.stack([x[1::3] - x[0::3], y[1::3] - y[0::3]], axis=1)


# --- figure builders -----------------------------------------------------------------------------------------------


def test_clock_frames_turn_both_hands_and_keep_the_angle_between_them() -> None:
    fig = VIEW.figures["clocks"](DEFAULTS, "en")
    assert len(fig.frames) == rope.CLOCK_FRAMES and all(list(f.traces) == [2, 3] for f in fig.frames)
    first_q, first_k = tips(fig.data[2].x, fig.data[2].y), tips(fig.data[3].x, fig.data[3].y)
    np.testing.assert_allclose(tips(fig.frames[0].data[0].x, fig.frames[0].data[0].y), first_q)

    def angle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        return np.angle((a[:, 0] + 1j * a[:, 1]) * np.conj(b[:, 0] + 1j * b[:, 1]))

    last = fig.frames[-1].data
    q_last, k_last = tips(last[0].x, last[0].y), tips(last[1].x, last[1].y)
    assert not np.allclose(q_last[0], first_q[0])  # pair 0 turned (1 rad per token)
    np.testing.assert_allclose(angle(q_last, k_last), angle(first_q, first_k), atol=1e-9)
    np.testing.assert_allclose(np.linalg.norm(q_last, axis=1), np.linalg.norm(first_q, axis=1), rtol=1e-12)


def test_clock_of_one_pair_and_of_six_pairs() -> None:
    one = VIEW.figures["clocks"](dict(DEFAULTS, pairs=(5,)), "zh")
    assert len(one.layout.annotations) == 1 and "i = 5" in one.layout.annotations[0].text
    six = VIEW.figures["clocks"](MAXIMAL, "en")
    assert len(six.layout.annotations) == 6 and six.layout.height > one.layout.height  # two rows of clocks
    assert len(pio.to_json(six, validate=False)) < 300_000


def test_pairs_that_do_not_exist_for_this_dim_are_dropped_not_drawn() -> None:
    values = dict(DEFAULTS, dim=8, pairs=(0, 3, 40))
    assert rope._pairs(values) == (0, 3)
    assert rope._pairs(dict(DEFAULTS, dim=8, pairs=())) == (0,)
    VIEW.figures["clocks"](values, "en")  # no IndexError


def test_pair_list_param_follows_half_the_dimension() -> None:
    param = VIEW.param("pairs")
    assert param.upper({"dim": 128}) == 63 and param.upper({"dim": 2}) == 0
    assert param.clamp((0, 4, 16, 63), {"dim": 16}) == (0, 4)


def test_pairing_strip_colours_dimensions_by_pair_and_links_the_selected_pairs() -> None:
    fig = figs.pairing_strip(np.arange(8) // 2, np.arange(8) % 4, (1,), lang="en")
    z = np.asarray(fig.data[0].z)
    assert z[0].tolist() == [0, 0, 1, 1, 2, 2, 3, 3] and z[2].tolist() == [0, 1, 2, 3, 0, 1, 2, 3]
    assert np.isnan(z[1]).all()  # the gap between the two layouts
    links = list(fig.data[1].x)
    assert links == [2, 1, None, 3, 5, None]  # interleaved dim 2 → half slot 1, dim 3 → slot 1 + d/2


def test_near_repeat_bars_mark_what_never_came_back() -> None:
    fig = figs.near_repeats((44, 1219, None), 10**6, 6, lang="en")
    bar = fig.data[0]
    assert list(bar.y) == [44, 1219, 10**6] and bar.text == ("44", "1,219", "")
    assert bar.customdata[-1] == "> 1,000,000" and bar.marker.color[-1] != bar.marker.color[0]
    assert "10<sup>6</sup>" in fig.layout.annotations[0].text


def test_decay_marks_the_published_distances() -> None:
    fig = VIEW.figures["decay"](DEFAULTS, "en")
    marks = fig.data[2]
    assert list(marks.x) == [100, 256]
    notes = [a.text for a in fig.layout.annotations]
    assert notes == ["r = 100: 10.23", "r = 256: 6.54", "r = 0: 32.50"]
    assert fig.layout.annotations[0].x == pytest.approx(2.0)  # log10(100): annotations on a log axis
    assert fig.layout.xaxis.type == "log" and max(fig.data[0].x) == 1e6


def test_random_band_switches_its_theory_line_with_k_equal_q() -> None:
    independent = VIEW.figures["random"](DEFAULTS, "en")
    aligned = VIEW.figures["random"](dict(DEFAULTS, same_vector=True), "en")
    theta = 1e4 ** (-np.arange(0, 128, 2) / 128)
    assert independent.data[2].x[0] == 1 and not np.any(independent.data[2].y)
    assert aligned.data[2].y[0] == pytest.approx(2 * np.sum(np.cos(theta)))  # E[q·R_1 q] = 2 Σ cos θ_i
    assert independent.layout.title.text != aligned.layout.title.text


def test_periods_show_the_published_example_true_and_as_printed() -> None:
    fig = VIEW.figures["periods"](DEFAULTS, "en")
    true, printed = fig.data[1], fig.data[2]
    np.testing.assert_allclose(true.y, [2 * math.pi, 200 * math.pi, 2 * math.pi * 1e4 ** (510 / 512)])
    assert list(printed.y) == [6.28, 316.23, 15811.39] and printed.x[-1] == 1.0  # "i = 256": past the last pair


def test_toy_clock_puts_position_twelve_on_position_zero_on_the_outer_ring_only() -> None:
    fig = VIEW.figures["toy"](DEFAULTS, "en")
    outer, inner = fig.data[2], fig.data[5]  # the highlighted positions 0 and 12 of each ring
    assert list(outer.customdata) == [0, 12] == list(inner.customdata)
    assert outer.x[0] == pytest.approx(outer.x[1]) and outer.y[0] == pytest.approx(outer.y[1], abs=1e-12)
    assert list(outer.text) == ["0 = 12", ""] and list(inner.text) == ["0", "12"]
    assert math.hypot(inner.x[0] - inner.x[1], inner.y[0] - inner.y[1]) > 0.3


# --- checks --------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "values",
    [DEFAULTS, MAXIMAL, dict(DEFAULTS, dim=4, base=100.0, trained="half")],
    ids=["defaults", "maximal", "small"],
)
def test_every_check_passes_across_the_sliders(values) -> None:
    for name, check in VIEW.checks.items():
        result = check(values)
        assert result.passed, (name, result)


def test_relative_check_is_float64_rounding_even_at_the_largest_positions() -> None:
    assert VIEW.checks["relative"](DEFAULTS).residual < 1e-11
    assert VIEW.checks["relative"](MAXIMAL).residual < 1e-9


def test_with_one_pair_there_is_nothing_to_mix_up() -> None:
    one_pair = dict(DEFAULTS, dim=2)
    assert VIEW.checks["wrong"](one_pair) == VIEW.checks["mixed"](one_pair)  # shown once on the page
    assert VIEW.checks["wrong"](one_pair).key == "rope.check_one_pair"


def test_wrong_pairing_stays_relative_but_loses_the_peak() -> None:
    check = VIEW.checks["wrong"](DEFAULTS)
    assert check.residual < 1e-9 and float(check.fmt["right"]) > float(check.fmt["wrong"]) + 10
    assert VIEW.checks["mixed"](DEFAULTS).residual > 1.0


def test_published_decay_values_and_the_toy_repeat() -> None:
    assert VIEW.checks["published"](DEFAULTS).fmt["values"] == "32.50 / 10.23 / 6.54"
    toy = VIEW.checks["toy"](DEFAULTS)
    assert toy.fmt["alone"] == 12 and toy.fmt["together"] == "132"


@pytest.mark.parametrize("seed", range(0, 100, 11))
def test_no_decay_check_holds_for_many_seeds(seed: int) -> None:
    for dim, base in ((2, 100.0), (128, 1e4), (512, 1e7)):
        assert VIEW.checks["no_decay"](dict(DEFAULTS, seed=seed, dim=dim, base=base)).passed


# --- the page ------------------------------------------------------------------------------------------------------


def test_page_shows_every_check_passing_inline(open_page) -> None:
    at = open_page(SCRIPT, lang="en")
    assert not at.exception
    passed = [line for line in shown_checks(at) if line.startswith("✓")]
    assert len(passed) == len(VIEW.checks) and not at.error
    assert len(sent_charts(at)) == len(VIEW.figures)


def test_deep_link_with_pairs_beyond_the_dimension_is_clamped_with_a_notice(open_page) -> None:
    at = open_page(SCRIPT, lang="zh", params={"dim": "16", "pairs": "0,3,40", "base": "500000", "trained": "half"})
    assert not at.exception
    assert at.multiselect(key="rope.pairs").value == [0, 3]
    assert at.select_slider(key="rope.base").value == 500000.0
    assert len(at.warning) == 1 and "40" in at.warning[0].value
    assert at.query_params["pairs"] == "0,3"


def test_shrinking_the_dimension_drops_pairs_that_no_longer_exist(open_page) -> None:
    at = open_page(SCRIPT, lang="en")
    at.slider(key="rope.dim").set_value(8).run()
    assert not at.exception and at.multiselect(key="rope.pairs").value == [0]
    at.slider(key="rope.dim").set_value(2).run()
    assert not at.exception
    assert sum("nothing to mix up" in box.value for box in at.success) == 1


def test_the_all_ones_curve_is_twice_the_sum_of_cosines_and_equals_the_k_equals_q_mean() -> None:
    r"""All-ones q and k: each pair (1, 1) against (1, 1) turned by rθᵢ scores 2 cos rθᵢ, so the curve is 2 Σᵢ cos rθᵢ
    (written out here); the random band's mean with k = q is the same curve, as the paragraph says."""
    v = {**defaults(VIEW.params), "dim": 64, "base": 10000.0}
    fig = VIEW.figures["decay"](v, "en")
    ones = next(trace for trace in fig.data if "2 Σ" in trace.name)
    r = np.asarray(ones.x, float)
    theta = 10000.0 ** (-np.arange(0, 64, 2) / 64)
    assert np.allclose(ones.y, 2 * np.cos(np.outer(r, theta)).sum(axis=1), atol=1e-9)
    band = VIEW.figures["random"]({**v, "same_vector": True}, "en")
    theory = next(trace for trace in band.data if trace.line.dash == "dash")
    assert np.allclose(theory.y, ones.y, atol=1e-9)
