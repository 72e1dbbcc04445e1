r"""Page 10 (position at length): the page renders in both languages with every live check holding, each check holds
at the ends of every slider it reads, the figures show what the words say, and junk in the URL gives notices, not a
traceback."""

from __future__ import annotations

import itertools

import numpy as np
import plotly.io as pio
import pytest

from posenc_ui.lessons.length.view import VIEW
from posenc_ui.state import ChoiceParam, IntParam, defaults

DEFAULTS = defaults(VIEW.params)
SCRIPT = "pages/10_Position_at_length.py"


def _ends(name: str) -> list:
    param = VIEW.param(name)
    if isinstance(param, ChoiceParam):
        return list(param.options)
    assert isinstance(param, IntParam)
    return sorted({param.lo, param.default, param.hi})


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_renders_and_every_check_holds(open_page, lang: str) -> None:
    at = open_page(SCRIPT, lang=lang)
    assert not at.exception
    boxes = [box.value for box in at.success] + [box.value for box in at.error]
    lines = [line for box in boxes for line in box.split("\n\n") if line[:1] in "✓✗"]
    assert len(lines) == len(VIEW.checks)
    assert all(line.startswith("✓") for line in lines)


@pytest.mark.parametrize("name", list(VIEW.checks))
def test_each_check_holds_at_the_ends_of_every_slider_it_reads(name: str) -> None:
    check = VIEW.checks[name]
    read = check.uses
    for values in itertools.product(*(_ends(p) for p in read)):
        result = check({**DEFAULTS, **dict(zip(read, values, strict=True))})
        assert result.passed, (name, dict(zip(read, values, strict=True)), result.residual)


@pytest.mark.parametrize("seed", range(21))
def test_the_gate_checks_hold_for_every_seed_a_reader_can_pick(seed: int) -> None:
    for name in ("fox_toeplitz", "cope", "stick"):
        for length in (8, 24, 64):
            assert VIEW.checks[name]({**DEFAULTS, "seed": seed, "gate_length": length}).passed, (name, seed, length)


def test_the_cache_figure_keeps_sinks_and_window_at_positions_below_the_cache_size() -> None:
    values = {**DEFAULTS, "sinks": 4, "window": 6, "stream": 40}
    z = np.asarray(VIEW.figures["cache"](values, "en").data[0].z, dtype=float)
    for t, row in enumerate(z):
        kept = np.flatnonzero(~np.isnan(row))
        assert len(kept) == min(t + 1, 10)
        assert np.array_equal(row[kept], np.arange(len(kept)))  # slot c holds position c
        if t >= 10:
            assert kept.tolist() == [0, 1, 2, 3, *range(t - 5, t + 1)]


@pytest.mark.parametrize("sink", [-4, 2, 8])
def test_row_sums_are_one_without_the_sink_and_below_one_with_it(sink: int) -> None:
    plain, sunk = VIEW.figures["row_sums"]({**DEFAULTS, "sink": sink}, "en").data
    assert np.allclose(np.asarray(plain.y, dtype=float), 1.0)
    assert np.all(np.asarray(sunk.y, dtype=float) < 1.0)


def test_the_published_tables_are_drawn_only_for_their_head_size() -> None:
    for head_dim, count in ((128, 7), (64, 0)):
        fig = VIEW.figures["bounds"]({**DEFAULTS, "head_dim": head_dim}, "en")
        assert [len(trace.x) for trace in fig.data[1:3]] == [count, count]


def test_an_mla_head_is_drawn_as_meeting_the_criterion_at_its_rotating_size() -> None:
    r"""DeepSeek-V3's query–key head is 128 dimensions that never turn (qk_nope_head_dim, its config.json and
    transformers' DeepseekV3Config) and 64 that do: 64 pairs at θ = 0 and 32 turning. Summed by a plain loop over m,
    B_m = 64 + Σ cos(mθ_i) ≥ 64 − 32 over the whole context, so the page draws it filled on the d = 64 figure, below
    the plain-head line from 2K on (as the words say), and nowhere on the d = 128 one."""
    from posenc_core import model_layers
    from posenc_ui.lessons.length.view import BOUND_LENGTHS, bound_at, model_points
    from posenc_ui.presets import load_presets

    config = load_presets()["deepseek_v3"].config()
    (layer,) = {layer.base: layer for layer in model_layers(config) if layer.rotates}.values()
    theta = layer.frequencies.inv_freq
    assert theta.shape == (32,) and config["qk_nope_head_dim"] == 128
    low = min(64 + float(np.sum(np.cos(m * theta))) for m in range(0, config["max_position_embeddings"], 97))
    assert low >= 32.0
    (point,) = [p for p in model_points(64) if p[0] == "DeepSeek-V3"]
    assert point == ("DeepSeek-V3", 163840, 10000.0, True, 128)
    assert all(p[0] != "DeepSeek-V3" for p in model_points(128))
    assert [bound_at(64, int(n)) > point[2] for n in BOUND_LENGTHS if n >= 1024] == [False] + [True] * 6
    fig = VIEW.figures["bounds"]({**DEFAULTS, "head_dim": 64}, "en")
    filled = next(trace for trace in fig.data if trace.name.startswith("model: B<sub>m</sub> ≥ 0"))
    assert any(text.startswith("DeepSeek-V3 (+ 128") for text in filled.text)


def test_llama4_multiplier_is_one_below_its_floor_and_grows_after() -> None:
    trace = VIEW.figures["multipliers"](DEFAULTS, "en").data[1]
    n, y = np.asarray(trace.x), np.asarray(trace.y, dtype=float)
    assert np.all(y[n < 8192] == 1.0) and np.all(y[n >= 8192] > 1.0)


def test_payloads_at_the_largest_settings_stay_under_1_mb() -> None:
    values = {**DEFAULTS, "context": 65536, "stream": 96, "window": 32, "gate_length": 64}
    for name, build in VIEW.figures.items():
        assert len(pio.to_json(build(values, "en"), validate=False)) < 1_000_000, name


def test_junk_in_the_url_gives_notices_and_a_working_page(open_page) -> None:
    junk = {"context": "12345", "ssmax_s": "nan", "window": "-5", "seed": "x", "head_dim": "7", "sink": "1e9"}
    at = open_page(SCRIPT, lang="zh", params=junk)
    assert not at.exception
    assert at.warning  # the notice names what was changed
    assert all(box.value.startswith("✓") for box in at.success if box.value[:1] in "✓✗")


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("seed", [0, 7])
def test_in_every_bias_panel_yellow_is_near_and_each_has_a_colour_bar_and_named_axes(lang: str, seed: int) -> None:
    r"""One colour, one meaning: on the diagonal (a key at distance 0 from its query) ALiBi's and FoX's biases are
    their largest value and T5's bucket and CoPE's position their smallest, so with the distances' scales turned
    round the diagonal is the yellow end of every panel but CoPE's bias (yellow: its largest). Each panel has its own
    colour bar; the keys' and queries' axes are named."""
    fig = VIEW.figures["gate_bias"]({**defaults(VIEW.params), "seed": seed}, lang)
    assert len(fig.data) == 5
    for trace in fig.data:
        z = np.asarray(trace.z, dtype=float)
        diagonal = np.diag(z)
        yellow = np.nanmin(z) if trace.reversescale else np.nanmax(z)
        assert trace.showscale and trace.colorbar.x is not None
        if "CoPE" in trace_title(fig, trace):
            continue  # CoPE's bias: a learned value per position, not a distance (yellow: favoured most)
        assert np.allclose(diagonal, yellow), trace_title(fig, trace)
    layout = fig.layout.to_plotly_json()
    assert any(a.get("title", {}).get("text") for k, a in layout.items() if k.startswith("xaxis"))
    assert any(a.get("title", {}).get("text") for k, a in layout.items() if k.startswith("yaxis"))


def trace_title(fig, trace) -> str:
    r"""The panel title above ``trace`` (the annotation centred over its x domain, at the top of its y domain)."""
    suffix = trace.xaxis[1:] if trace.xaxis and trace.xaxis != "x" else ""
    x_centre = sum(fig.layout[f"xaxis{suffix}"].domain) / 2
    top = fig.layout[f"yaxis{suffix}"].domain[1]
    return next(a.text for a in fig.layout.annotations if abs(a.x - x_centre) < 1e-9 and abs(a.y - top) < 1e-9)
