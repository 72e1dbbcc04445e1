r"""Figures of page 7 that read a model layer by layer: a strip of its decoder layers (one cell each, coloured by the
kind of layer: how it rotates, over which window, or not at all) and the wavelengths of each kind that rotates.

Pure builders: the words (legend entries, hover text, title) and the numbers come in already made; no core call here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import plotly.graph_objects as go

from ...figures.style import (
    BLACK,
    BLUE,
    ENCODING_COLOURS,
    GREEN,
    LEGEND_UNITS,
    OLIVE,
    ORANGE,
    PURPLE,
    SKY,
    VERMILION,
    WHITE,
    YELLOW,
    ZERO_LINE,
    figure,
    legend_below,
    wrap_title,
)
from ...i18n import t
from .figures import Curve, wavelength_chart

#: One colour per kind of layer that rotates, in order of first appearance; a layer whose attention sees position
#: otherwise is drawn in its encoding family's colour (no position: the grey every page gives "none").
KIND_COLOURS = (GREEN, BLUE, ORANGE, PURPLE, SKY, VERMILION)
NOPE_COLOUR = ENCODING_COLOURS["none"]
#: A layer without attention over the sequence, by its block (:data:`posenc_core.BLOCK_KINDS`).
BLOCK_COLOURS = {"recurrent": BLACK, "convolution": OLIVE, "cross_attention": YELLOW, "mlp": ZERO_LINE}
#: Cell heights: a RoPE layer full, attention that sees position otherwise half, a layer without attention a quarter.
#: The look of a layer that rotates (the position kind of that name).
ROTATING = "rope"
HEIGHTS = {ROTATING: 1.0, "attention": 0.5}
BLOCK_HEIGHT = 0.25
NOPE_HEIGHT = HEIGHTS["attention"]
STRIP_HEIGHT = 190  # px before the legend's lines
LEGEND_LINE = 20  # px a line of the legend takes


class CellLook(NamedTuple):
    r"""How a kind of layer is drawn: ``what`` is :data:`ROTATING`, "attention" (without RoPE) or a block without
    attention (:data:`BLOCK_COLOURS`); ``family`` the encoding family its attention's position belongs to (its colour).
    """

    what: str
    family: str | None

    @property
    def rotates(self) -> bool:
        return self.what == ROTATING


def kind_colours(looks: Sequence[CellLook | bool]) -> list[str]:
    r"""The colour of each kind of layer (in order): the next of KIND_COLOURS where it rotates, its family's colour
    where its attention sees position otherwise, its block's where it has no attention (a bool is read as
    rotates / NoPE)."""
    colours, turning = [], 0
    for look in looks:
        look = _as_look(look)
        if look.rotates:
            colours.append(KIND_COLOURS[turning % len(KIND_COLOURS)])
            turning += 1
        elif look.what == "attention":
            colours.append(ENCODING_COLOURS[look.family] if look.family in ENCODING_COLOURS else NOPE_COLOUR)
        else:
            colours.append(BLOCK_COLOURS[look.what])
    return colours


def _as_look(look: CellLook | bool) -> CellLook:
    if isinstance(look, CellLook):
        return look
    return CellLook(ROTATING, None) if look else CellLook("attention", "none")


def layer_strip(
    kinds: np.ndarray,
    names: Sequence[str],
    rotates: Sequence[CellLook | bool],
    hover: Sequence[str],
    *,
    title: str,
    lang: str,
) -> go.Figure:
    r"""One cell per decoder layer (x = its index), coloured by its kind ``kinds[layer]`` (an index into ``names``,
    the legend entry of each kind), drawn as ``rotates[kind]`` says (:class:`CellLook`; a bool: rotates or NoPE): a
    layer that rotates is a full cell, attention without RoPE half a cell, a layer without attention a quarter, so
    it reads without colour too. ``hover[layer]`` is the cell's hover text. The figure grows by the legend's lines (long
    entries wrap on a phone), so that plotly never has to scroll the legend."""
    colours = kind_colours(rotates)
    layers = np.arange(kinds.shape[0])
    traces = []
    for kind, (name, colour, look) in enumerate(zip(names, colours, rotates, strict=True)):
        look = _as_look(look)
        chosen = layers[kinds == kind]
        marker = {"color": colour, "line": {"color": WHITE, "width": 1 if layers.shape[0] <= 64 else 0}}
        traces.append(
            {
                "type": "bar",
                "x": chosen,
                "y": np.full(chosen.shape[0], HEIGHTS.get(look.what, BLOCK_HEIGHT)),
                "width": 1.0,
                "marker": marker,
                "name": name,
                "customdata": [hover[i] for i in chosen],
                "hovertemplate": "%{customdata}<extra></extra>",
            }
        )
    span = max(int(layers.shape[0]), 1)
    lines = sum(wrap_title(name, LEGEND_UNITS).count("<br>") + 1 for name in names)
    return figure(
        traces,
        title=title,
        x=t("extension.axis_layer", lang),
        height=STRIP_HEIGHT + LEGEND_LINE * lines,
        bargap=0.0,
        xaxis={"range": [-0.5, span - 0.5], "zeroline": False, "showgrid": False, "fixedrange": True},
        yaxis={"visible": False, "range": [0, 1], "fixedrange": True},
        legend=legend_below(),
        showlegend=True,  # one kind of layer is still a kind to name: plotly hides a legend of one trace
        margin={"l": 12, "r": 12},
        hovermode="closest",
    )


def layer_wavelengths(
    wavelengths: Sequence[np.ndarray],
    names: Sequence[str],
    colours: Sequence[str],
    *,
    length: int,
    title: str,
    lang: str,
) -> go.Figure:
    r"""The wavelength :math:`\lambda_i = 2\pi/\theta_i` (log) of every pair, one line per kind of layer that rotates
    (a pair that does not turn, θ = 0, is left out: NaN in ``wavelengths``), the training length L as a line."""
    curves = [
        Curve(values, name, colour, dash="solid" if k == 0 else "dash")
        for k, (values, name, colour) in enumerate(zip(wavelengths, names, colours, strict=True))
    ]
    return wavelength_chart(curves, length=length, title=title, lang=lang, legend=legend_below(), showlegend=True)
