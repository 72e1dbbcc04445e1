r"""Page 4 — learned absolute position embeddings (BERT, GPT-2).

A (max_length, d) table with one trained row per position: nothing exists past the last row, so a learned table
cannot extrapolate — :func:`posenc_core.lookup_positions` refuses, and the page shows that refusal as the lesson.
Sinusoids, computed from a formula, simply keep going. Last, syllabus 001's question: why may position simply be
*added* to the word? Because token + position + segment lookups are one linear layer over concatenated one-hots.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from posenc_core import (
    EmbeddingSum,
    PositionOutOfRangeError,
    embedding_sum_as_linear,
    learned_table,
    lookup_positions,
    sinusoidal,
)

from ..figures import heatmap
from ..figures import learned as figs
from ..figures import sinusoidal as sin_figs
from ..i18n import t
from ..memo import memo
from ..state import IntParam
from .base import Check, Explain, Values, View, uses

#: Syllabus 001's toy BERT: 4 tokens, 3 positions, 2 segments.
VOCAB, POSITIONS, SEGMENTS = 4, 3, 2


def curves(dim: int) -> tuple[int, ...]:
    r"""Columns drawn in the extrapolation figure: a sin/cos pair a quarter in (wavelength ≈ 60 tokens at
    base 10⁴) and a sine half-way in (≈ 600 tokens) — slow enough to follow by eye over a few hundred positions."""
    return (dim // 4, dim // 4 + 1, dim // 2)


PARAMS = (
    IntParam("max_length", 512, lo=16, hi=1024, step=16),
    IntParam("dim", 64, lo=8, hi=256, step=8),
    IntParam("position", 600, lo=0, hi=2048),
    IntParam("token", 0, lo=0, hi=VOCAB - 1),
    IntParam("pos", 0, lo=0, hi=POSITIONS - 1),
    IntParam("segment", 0, lo=0, hi=SEGMENTS - 1),
    IntParam("width", 8, lo=2, hi=32, step=2),
)


@memo
def _table(max_length: int, dim: int) -> np.ndarray:
    return learned_table(max_length, dim, seed=0)  # (max_length, d), N(0, 0.02²) as BERT initialises


def probe(v: Values) -> str | None:
    r"""The core's refusal for the chosen position, or None if the table has a row for it."""
    try:
        lookup_positions(_table(v["max_length"], v["dim"]), [v["position"]])
    except PositionOutOfRangeError as err:
        return str(err)
    return None


@uses("max_length", "dim")
def table_figure(v: Values, lang: str) -> go.Figure:
    table = _table(v["max_length"], v["dim"])
    row_stride, col_stride = heatmap.strides(*table.shape)
    rows, cols = np.arange(0, table.shape[0], row_stride), np.arange(0, table.shape[1], col_stride)
    title = t("learned.fig_table", lang, max_length=v["max_length"], dim=v["dim"])
    return sin_figs.encoding_heatmap(table[np.ix_(rows, cols)], rows, cols, title=title, lang=lang, symmetric=None)


@uses("max_length", "dim", "position")
def extrapolation_figure(v: Values, lang: str) -> go.Figure:
    shown = max(v["position"] + 1, v["max_length"]) + v["max_length"] // 4  # a little past both
    inside = np.arange(min(shown, v["max_length"]))
    columns = list(curves(v["dim"]))
    learned = lookup_positions(_table(v["max_length"], v["dim"]), inside)[:, columns]
    sines = sinusoidal(shown, v["dim"])[:, columns]
    return figs.extrapolation(learned, sines, v["max_length"], v["position"], columns, lang=lang)


@memo
def _embedding_sum(token: int, pos: int, segment: int, width: int) -> EmbeddingSum:
    r"""Both sides of the identity for one token, with three freshly initialised tables (seeds 1, 2, 3)."""
    tables = [learned_table(n, width, seed=s) for s, n in enumerate((VOCAB, POSITIONS, SEGMENTS), start=1)]
    return embedding_sum_as_linear([[token], [pos], [segment]], tables)


@uses("token", "pos", "segment", "width")
def onehot_figure(v: Values, lang: str) -> go.Figure:
    parts = _embedding_sum(v["token"], v["pos"], v["segment"], v["width"])
    return figs.one_hot_weights(parts.one_hot[0], parts.weight, (VOCAB, POSITIONS, SEGMENTS), lang=lang)


@uses("token", "pos", "segment", "width")
def outputs_figure(v: Values, lang: str) -> go.Figure:
    parts = _embedding_sum(v["token"], v["pos"], v["segment"], v["width"])
    return figs.embedding_outputs(parts.summed[0], parts.linear[0], lang=lang)


@uses("token", "pos", "segment", "width")
def check_onehot(v: Values) -> Check:
    parts = _embedding_sum(v["token"], v["pos"], v["segment"], v["width"])
    return Check("learned.check_onehot", float(np.max(np.abs(parts.summed - parts.linear))))


@uses("max_length", "dim")
def check_wall(v: Values) -> Check:
    r"""Row max_length − 1 is served, position max_length is refused: the residual counts wrong answers."""
    served = probe(dict(v, position=v["max_length"] - 1)) is None
    refused = probe(dict(v, position=v["max_length"])) is not None
    return Check(
        "learned.check_wall", float(2 - served - refused), fmt={"last": v["max_length"] - 1, "first": v["max_length"]}
    )


VIEW = View(
    page_id="learned",
    params=PARAMS,
    figures={
        "table": table_figure,
        "extrapolation": extrapolation_figure,
        "onehot": onehot_figure,
        "outputs": outputs_figure,
    },
    checks={"onehot": check_onehot, "wall": check_wall},
    explain=Explain(
        latex=(
            r"x_p = E_{\text{tok}}[t_p] + E_{\text{pos}}[p] + E_{\text{seg}}[s_p]",
            r"p \in \{0, \dots, L_{\max} - 1\}",
            r"x_p = \big[\mathbf 1_{t_p} \,\|\, \mathbf 1_{p} \,\|\, \mathbf 1_{s_p}\big]\, W, \quad "
            r"W = \begin{bmatrix}E_{\text{tok}}\\ E_{\text{pos}}\\ E_{\text{seg}}\end{bmatrix}",
        ),
        sources=(learned_table, lookup_positions, embedding_sum_as_linear),
        paper="Devlin et al. 2018, *BERT*, arXiv:1810.04805, §3.2; Vaswani et al. 2017, arXiv:1706.03762, §3.5",
        checks=("wall", "onehot"),
    ),
)
