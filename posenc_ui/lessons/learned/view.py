r"""Page 4 — learned absolute position embeddings (BERT, GPT-2).

A (max_length, d) table with one trained row per position: nothing exists past the last row, so a learned table
cannot extrapolate — :func:`posenc_core.lookup_positions` refuses, and the page shows that refusal as the lesson.
Sinusoids, computed from a formula, simply keep going. Then the table a model actually trained: the extrapolation
lab's (page 12, committed in ``assets/lab/``), whose rows past the training windows were never touched — shown with
:func:`posenc_core.neighbour_cosine` and, against a twin trained from the same seed, :func:`posenc_core.row_distances`.
Last, the question of mmmwhy's 「Transformer 中的 position embedding 的设计」: why may position simply be *added* to the
word? Because token + position + segment lookups are one linear layer over concatenated one-hots.
"""

from __future__ import annotations

import json
from typing import NamedTuple

import numpy as np
import plotly.graph_objects as go

from posenc_core import (
    EmbeddingSum,
    PositionOutOfRangeError,
    embedding_sum_as_linear,
    learned_table,
    lookup_positions,
    neighbour_cosine,
    neighbour_cosine_means,
    random_cosine_band,
    row_distances,
    sinusoidal,
    trained_row_change,
)
from posenc_lab.runs import committed_run

from ...figures import heatmap
from ...i18n import t
from ...lesson import Check, Explain, PageEntry, Values, View, reads, uses
from ...memo import RESULTS, memo
from ...state import ChoiceParam, IntParam
from ..sinusoidal import figures as sin_figs
from . import figures as figs

#: The toy BERT of mmmwhy's 「Transformer 中的 position embedding 的设计」: 4 tokens, 3 positions, 2 segments.
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
    ChoiceParam("model", "text", options=("text", "lag")),
)

#: The extrapolation lab's committed runs (page 12, :func:`posenc_lab.runs.committed_run`) whose learned table this page
#: shows, by task. Each stores its first seed's trained table, rows 0 … 4L − 1, under ``runs.learned.table``.
TRAINED_FILES = {"text": committed_run("text").path, "lag": committed_run("lag", lag=2).path}
#: The lag task again, copying 8 tokens back instead of 2, with the same seed and the same model: it starts from the
#: very same random table as the lag-2 run, so comparing the two shows which rows training moved.
TWIN_FILE = committed_run("lag", lag=8).path


@memo
def _table(max_length: int, dim: int) -> np.ndarray:
    return learned_table(max_length, dim, seed=0)  # (max_length, d), N(0, 0.02²) as BERT initialises


@reads("max_length", "dim", "position")
def probe(v: Values) -> PositionOutOfRangeError | None:
    r"""The core's refusal for the chosen position, or None if the table has a row for it."""
    try:
        lookup_positions(_table(v["max_length"], v["dim"]), [v["position"]])
    except PositionOutOfRangeError as err:
        return err
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


class TrainedTable(NamedTuple):
    r"""A learned position table from the lab, and what its model scored at each row."""

    table: np.ndarray  # (rows, d): rows 0 … 4L − 1 of the trained table (read-only)
    loss: np.ndarray  # (rows,): loss of the prediction made at row r, i.e. of token r + 1 (read-only, nats)
    train_length: int  # L, the length of the training windows
    trained: int  # rows 0 … trained − 1 were trained; every later row kept its random start


@memo(budget=RESULTS)
def read_trained(path: str) -> TrainedTable:
    r"""The trained table of a committed lab run, read once while the app's memory keeps it (a run never changes).

    The lab trains on windows of L tokens and feeds the model the first L − 1 of them (the last is only a target), so
    rows 0 … L − 2 get gradients and rows L − 1 onwards never do. The lab's losses are indexed by the *predicted*
    token's position p; the prediction of token p is made at row p − 1, which is how they are lined up here.
    """
    with open(path, encoding="utf-8") as fh:
        results = json.load(fh)
    table = np.asarray(results["runs"]["learned"]["table"], dtype=np.float64)
    predicted = np.asarray(results["positions"], dtype=np.int64)
    rows = predicted - 1
    keep = (rows >= 0) & (rows < table.shape[0])
    loss = np.full(table.shape[0], np.nan)
    loss[rows[keep]] = np.asarray(results["runs"]["learned"]["loss"], dtype=np.float64)[keep]
    length = int(results["config"]["train_length"])
    for array in (table, loss):
        array.flags.writeable = False
    return TrainedTable(table, loss, length, length - 1)


def _trained(v: Values) -> TrainedTable:
    return read_trained(str(TRAINED_FILES[v["model"]]))


@reads("model")
def trained_facts(v: Values) -> dict[str, int]:
    r"""Numbers the section's text quotes for the chosen model: shape, L, last trained, first and last untouched row."""
    model = _trained(v)
    rows, dim = model.table.shape
    return {
        "rows": rows,
        "dim": dim,
        "length": model.train_length,
        "last": model.trained - 1,
        "first": model.trained,
        "end": rows - 1,
    }


@uses("model")
def trained_table_figure(v: Values, lang: str) -> go.Figure:
    model = _trained(v)
    table = model.table
    row_stride, col_stride = heatmap.strides(*table.shape)
    rows, cols = np.arange(0, table.shape[0], row_stride), np.arange(0, table.shape[1], col_stride)
    limit = 3.0 * float(np.sqrt(np.mean(table**2)))  # ±3 RMS: N(0, 1) rows fill the colour range without washing out
    title = t(
        "learned.fig_trained",
        lang,
        model=t(f"learned.model.{v['model']}", lang),
        rows=table.shape[0],
        dim=table.shape[1],
    )
    return figs.trained_table(table[np.ix_(rows, cols)], rows, cols, model.trained, limit=limit, title=title, lang=lang)


@uses("model")
def trained_rows_figure(v: Values, lang: str) -> go.Figure:
    model = _trained(v)
    dim = model.table.shape[1]
    shown = np.isfinite(model.loss)
    return figs.trained_rows(
        neighbour_cosine(model.table),
        np.flatnonzero(shown),
        model.loss[shown],
        model.trained,
        band=random_cosine_band(dim),
        lang=lang,
    )


def _twins() -> tuple[TrainedTable, TrainedTable]:
    return read_trained(str(TRAINED_FILES["lag"])), read_trained(str(TWIN_FILE))


@uses()
def untouched_figure(v: Values, lang: str) -> go.Figure:
    first, second = _twins()
    return figs.untouched_rows(row_distances(first.table, second.table), first.trained, lang=lang)


@uses("model")
def check_neighbours(v: Values) -> Check:
    r"""The trained rows are no smoother than random ones: both means lie inside the ±2/√d band of random pairs."""
    model = _trained(v)
    band = random_cosine_band(model.table.shape[1])
    inside, past = neighbour_cosine_means(model.table, trained=model.trained)
    return Check(
        "learned.check_neighbours",
        max(abs(inside), abs(past)),
        tolerance=band,
        fmt={"inside": f"{inside:.2f}", "past": f"{past:.2f}", "band": f"{band:.2f}", "last": model.trained - 1},
    )


@uses()
def check_untouched(v: Values) -> Check:
    r"""Two models from one seed: every row from the first untrained one on is identical in both, and every earlier
    row differs. The residual is the largest difference among the untouched rows — 0 exactly, not merely small — or
    infinite if some trained row did not move at all."""
    first, second = _twins()
    change = trained_row_change(first.table, second.table, trained=first.trained)
    residual = change.untouched_max if change.moved_min > 0 else float("inf")
    return Check(
        "learned.check_untouched",
        residual,
        tolerance=0.0,
        fmt={
            "first": first.trained,
            "last": first.table.shape[0] - 1,
            "trained_last": first.trained - 1,
            "inside": f"{change.moved_mean:.2f}",
            "norm": f"{change.mean_norm:.1f}",
        },
    )


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
        "trained_table": trained_table_figure,
        "trained_rows": trained_rows_figure,
        "untouched": untouched_figure,
        "onehot": onehot_figure,
        "outputs": outputs_figure,
    },
    sweeps={"table": "max_length", "extrapolation": "position", "onehot": "token", "outputs": "token"},
    static={
        "trained_table": "a committed trained table: its one choice picks another file, not a computation",
        "trained_rows": "a committed trained table: its one choice picks another file, not a computation",
        "untouched": "reads no parameter",
    },
    checks={"onehot": check_onehot, "wall": check_wall, "neighbours": check_neighbours, "untouched": check_untouched},
    explain=Explain(
        latex=(
            r"x_p = E_{\text{tok}}[t_p] + E_{\text{pos}}[p] + E_{\text{seg}}[s_p]",
            r"p \in \{0, \dots, L_{\max} - 1\}",
            r"x_p = \big[\mathbf 1_{t_p} \,\|\, \mathbf 1_{p} \,\|\, \mathbf 1_{s_p}\big]\, W, \quad "
            r"W = \begin{bmatrix}E_{\text{tok}}\\ E_{\text{pos}}\\ E_{\text{seg}}\end{bmatrix}",
        ),
        sources=(learned_table, lookup_positions, neighbour_cosine, row_distances, embedding_sum_as_linear),
        paper="Devlin et al. 2018, *BERT*, arXiv:1810.04805, §3.2; Vaswani et al. 2017, arXiv:1706.03762, §3.5",
    ),
)

PAGE = PageEntry("pages/4_Learned_absolute.py", VIEW, preview="extrapolation")
