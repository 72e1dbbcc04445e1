r"""Page 10 — every encoding side by side: relative or absolute (checked live: is the position-only score matrix
Toeplitz?), does it extrapolate (the extrapolation lab's committed run), what it costs, where it lives, who uses it.
"""

from __future__ import annotations

import json

import numpy as np
import plotly.graph_objects as go

from posenc_core.compare_analysis import (
    COMPARED,
    ExtrapolationExcess,
    extrapolation_excess,
    position_score_matrix,
    toeplitz_residual,
)

from ..catalog import BY_ID, ROOT
from ..figures import compare as figs
from ..figures import heatmap
from ..figures.style import ENCODING_COLOURS, GREY, SKY
from ..i18n import t
from ..memo import memo
from ..state import IntParam
from .base import Check, Explain, Values, View, uses

#: The committed run of the extrapolation lab (page 9): per-position loss of each encoding and the optimum.
LAB_RESULTS = ROOT / "assets" / "lab" / "results_cpu_seed0.json"
#: Mean excess loss (nats) beyond the training length under which an encoding counts as extrapolating.
EXTRAPOLATION_TOLERANCE = 0.05
#: Relative diagonal spread under which a matrix counts as Toeplitz (rounding is ~1e-15).
TOEPLITZ_TOLERANCE = 1e-9
ABSOLUTE, RELATIVE = ("sinusoidal", "learned"), ("shaw", "t5", "rope", "alibi")
COLOURS = {**ENCODING_COLOURS, "shaw": SKY}
LAB_ORDER = ("none", "sinusoidal", "learned", "t5", "rope", "alibi")

#: Cells per small multiple: a panel is ~200 px wide, so 96 × 96 is already finer than the screen.
PANEL_CELLS = 96 * 96

PARAMS = (IntParam("length", 64, lo=16, hi=256, step=16),)


def label(encoding: str, lang: str) -> str:
    r"""The encoding's name: the shared ``enc.*`` key, or this page's for Shaw (no shared key yet)."""
    return t("compare.enc_shaw", lang) if encoding == "shaw" else t(f"enc.{encoding}", lang)


@memo
def _matrices(length: int) -> dict[str, np.ndarray]:
    return {encoding: position_score_matrix(encoding, length) for encoding in COMPARED}


@memo
def _residuals(length: int) -> dict[str, float]:
    return {encoding: toeplitz_residual(matrix) for encoding, matrix in _matrices(length).items()}


@memo
def lab_excess(path: str = str(LAB_RESULTS)) -> tuple[dict[str, ExtrapolationExcess], int]:
    r"""Each lab encoding's mean excess loss inside / beyond the training length, and that length.

    ``loss[t]`` is the loss of predicting token t + 1, so it is compared with ``optimal_loss[t + 1]``; the first
    prediction of a position ≥ train_length is ``t = train_length − 1``.
    """
    with open(path, encoding="utf-8") as fh:
        results = json.load(fh)
    train_length = int(results["config"]["train_length"])
    optimal = np.asarray(results["optimal_loss"], dtype=np.float64)
    excess = {}
    for encoding in LAB_ORDER:
        loss = np.asarray(results["runs"][encoding]["loss"], dtype=np.float64)
        excess[encoding] = extrapolation_excess(loss, optimal[1 : loss.shape[0] + 1], split=train_length - 1)
    return excess, train_length


@uses("length")
def matrices_figure(v: Values, lang: str) -> go.Figure:
    stride, _ = heatmap.strides(v["length"], v["length"], max_cells=PANEL_CELLS)
    positions = np.arange(0, v["length"], stride)
    residuals = _residuals(v["length"])
    panels = [
        (
            t("compare.panel", lang, encoding=label(e, lang), residual=f"{residuals[e]:.1e}"),
            matrix[np.ix_(positions, positions)],
            positions,
        )
        for e, matrix in _matrices(v["length"]).items()
    ]
    return figs.score_matrices(panels, length=v["length"], lang=lang)


@uses()
def extrapolation_figure(v: Values, lang: str) -> go.Figure:
    excess, train_length = lab_excess()
    labels = {e: t("compare.enc_none", lang) if e == "none" else label(e, lang) for e in excess}
    colours = {e: COLOURS.get(e, GREY) for e in excess}
    return figs.extrapolation(
        excess, labels, colours, tolerance=EXTRAPOLATION_TOLERANCE, train_length=train_length, lang=lang
    )


def _mark(holds: bool) -> str:
    return "✓" if holds else "✗"


def comparison_table(v: Values, lang: str) -> str:
    r"""The markdown table encodings × properties; the first two columns are measured live."""
    residuals = _residuals(v["length"])
    excess, _ = lab_excess()
    lab = f"[{t('compare.lab_link', lang)}]({BY_ID['lab'].url_path or 'Extrapolation_lab'}?lang={lang})"
    head = [
        t(f"compare.col_{c}", lang)
        for c in ("encoding", "relative", "extrapolates", "params", "cost", "where", "models")
    ]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for e in COMPARED:
        r = residuals[e]
        kind = "relative" if r <= TOEPLITZ_TOLERANCE else "absolute"
        relative = f"{_mark(kind == 'relative')} {t(f'compare.{kind}', lang)} ({r:.1e})"
        if e in excess:
            beyond = excess[e].beyond
            extrapolates = f"{_mark(beyond <= EXTRAPOLATION_TOLERANCE)} {beyond:.3f} · {lab}"
        else:
            extrapolates = t("compare.not_in_lab", lang)
        cells = [
            f"**{label(e, lang)}**",
            relative,
            extrapolates,
            *(t(f"compare.{c}.{e}", lang) for c in ("params", "cost", "where", "models")),
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows)


@uses("length")
def check_relative(v: Values) -> Check:
    r"""Shaw, T5, RoPE and ALiBi give Toeplitz position-only score matrices: the largest residual is rounding."""
    worst = max(_residuals(v["length"])[e] for e in RELATIVE)
    return Check("compare.check_relative", worst, tolerance=TOEPLITZ_TOLERANCE, fmt={"length": v["length"]})


@uses("length")
def check_absolute(v: Values) -> Check:
    r"""Added sinusoidal and learned positions do not: even the smaller residual is of order 1."""
    least = min(_residuals(v["length"])[e] for e in ABSOLUTE)
    return Check(
        "compare.check_absolute", least, expect_zero=False, tolerance=TOEPLITZ_TOLERANCE, fmt={"length": v["length"]}
    )


@uses()
def check_extrapolation(v: Values) -> Check:
    r"""In the lab's committed run ALiBi's loss beyond the training length stays within 0.05 nats of the optimum."""
    excess, train_length = lab_excess()
    return Check(
        "compare.check_extrapolation",
        excess["alibi"].beyond,
        tolerance=EXTRAPOLATION_TOLERANCE,
        fmt={"length": train_length},
    )


@uses()
def check_no_extrapolation(v: Values) -> Check:
    r"""... while every other encoding of the lab ends at least 0.05 nats above it (the smallest excess is shown)."""
    excess, train_length = lab_excess()
    others = min(x.beyond for e, x in excess.items() if e != "alibi")
    return Check(
        "compare.check_no_extrapolation",
        others,
        expect_zero=False,
        tolerance=EXTRAPOLATION_TOLERANCE,
        fmt={"length": train_length},
    )


VIEW = View(
    page_id="compare",
    params=PARAMS,
    figures={"matrices": matrices_figure, "extrapolation": extrapolation_figure},
    checks={
        "relative": check_relative,
        "absolute": check_absolute,
        "extrapolation": check_extrapolation,
        "no_extrapolation": check_no_extrapolation,
    },
    explain=Explain(
        latex=(
            r"\text{added: } s_{ij} = \tfrac{1}{\sqrt d}\,(x + p_i)W_Q\,W_K^\top(x + p_j)^\top",
            r"\text{relative: } s_{ij} = \tfrac{1}{\sqrt d}\,q^\top R_{j-i}\,k + b_{j-i}",
            r"\text{relative} \iff s_{ij} = f(j - i)",
            r"\rho = \frac{\max_\delta\,(\max_{j-i=\delta} s - \min_{j-i=\delta} s)}{\max s - \min s}",
            r"\text{excess} = \operatorname{mean}_{t \ge L}\,\big(\ell_t - \ell^*_t\big)",
        ),
        sources=(position_score_matrix, toeplitz_residual, extrapolation_excess),
        paper="Vaswani et al. 2017, arXiv:1706.03762; Shaw et al. 2018, arXiv:1803.02155; Raffel et al. 2020 (T5), "
        "arXiv:1910.10683; Su et al. 2021 (RoPE), arXiv:2104.09864; Press et al. 2021 (ALiBi), arXiv:2108.12409",
        checks=("relative", "absolute", "extrapolation", "no_extrapolation"),
    ),
)
