r"""The builders of the real-model page's sections 4 and 5, on made-up arrays (no model): every axis titled in both
languages, the heatmap with a colour bar and the pairs labelled by wavelength, one line per side or method, the
reader's choice marked, the named layers coloured."""

from __future__ import annotations

import numpy as np
import pytest

from posenc_core import rope_inv_freq, rope_wavelengths
from posenc_ui.figures.style import GREY, VERMILION
from posenc_ui.lessons.real import figures_frequencies as figs


def _layout(fig) -> dict:
    return fig.to_plotly_json()["layout"] if hasattr(fig, "to_plotly_json") else fig["layout"]


def _data(fig) -> list[dict]:
    return fig.to_plotly_json()["data"] if hasattr(fig, "to_plotly_json") else fig["data"]


def test_wavelength_labels_are_short_and_in_order() -> None:
    labels = [figs.wavelength_label(w) for w in rope_wavelengths(rope_inv_freq(64, base=1e5))]
    assert labels[0] == "6.3" and labels[7] == "78" and labels[-1] == "438k"
    assert len(set(labels)) == 32


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_pair_norm_heatmap_has_a_colour_bar_and_titled_axes(lang: str) -> None:
    wavelengths = rope_wavelengths(rope_inv_freq(64, base=1e5))
    relative = np.random.default_rng(0).uniform(0.5, 2.0, size=(30, 32))
    fig = figs.pair_norms(relative, wavelengths, part="key", title="T", lang=lang)
    (trace,) = _data(fig)
    layout = _layout(fig)
    assert trace["type"] == "heatmap" and trace["showscale"] and trace["colorbar"]["title"]["text"]
    assert len(trace["x"]) == 32 and "y" in trace
    assert layout["xaxis"]["title"]["text"] and layout["yaxis"]["title"]["text"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_line_figures_draw_one_line_per_side_or_method_and_mark_the_choice(lang: str) -> None:
    change = {"slowest": np.array([0.0, -0.001, 0.0, 0.002]), "fastest": np.array([0.7, 1.2, 1.7, 2.2])}
    fig = figs.stopped_losses((2, 4, 8, 16), change, chosen=8, title="T", lang=lang)
    data = _data(fig)
    assert len(data) == 2 and [list(d["marker"]["size"]) for d in data] == [[6, 6, 11, 6]] * 2
    assert _layout(fig)["xaxis"]["title"]["text"] and _layout(fig)["yaxis"]["title"]["text"]
    methods = {m: np.linspace(0.1, 1.0, 4) for m in ("base", "linear", "dynamic", "yarn")}
    fig = figs.rescaled_losses((2, 4, 8, 16), methods, chosen=4.0, title="T", lang=lang)
    data = _data(fig)
    assert len(data) == 4 and list(data[0]["marker"]["size"]) == [6, 11, 6, 6]
    assert len({d["line"]["color"] for d in data}) == 4


def test_nope_bars_colour_the_named_layers() -> None:
    change = np.zeros(30)
    change[[3, 17]] = [0.5, 0.2]
    fig = figs.nope_layers(change, highlight=[3, 17], title="T", lang="en")
    colours = _data(fig)[0]["marker"]["color"]
    assert colours[3] == colours[17] == VERMILION and colours.count(GREY) == 28
