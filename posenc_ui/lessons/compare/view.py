r"""Page 13 — every encoding side by side: relative or absolute (checked live: is the position-only score matrix
Toeplitz?), does it extrapolate (all four committed runs of the extrapolation lab, every seed), what it costs, where
it lives, who uses it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import plotly.graph_objects as go

from posenc_core import (
    COMPARED,
    FAMILIES,
    alibi_linear_attention,
    bias_route_residual,
    numerical_rank,
    position_score_matrix,
    toeplitz_linear_attention,
    toeplitz_residual,
)
from posenc_core.families import RELATIVE_KINDS
from posenc_lab.runs import (
    EXCESS_TOLERANCE,
    LEARNED_TOLERANCE,
    RISE_TOLERANCE,
    Spread,
    Verdict,
    band_edges,
    band_table,
    committed_runs,
    extrapolation_verdicts,
    read_results,
    verdict,
    verdict_measures,
    verdict_tolerance,
)
from posenc_lab.tasks import ENCODINGS

from ...figures import heatmap
from ...figures.style import ENCODING_COLOURS
from ...i18n import t
from ...lesson import Check, Explain, PageEntry, Values, View, reads, uses
from ...memo import RESULTS, memo
from ...state import IntParam
from ..lab.view import PAGE as LAB_PAGE
from . import figures as figs
from .linear import check_linear, check_rank, linear_cell

Runs = tuple[tuple[str, Path], ...]
#: The committed runs of the extrapolation lab (page 12, :func:`posenc_lab.runs.committed_runs`), three seeds each:
#: (run id, file). Every lab-derived mark, number, figure and check of this page reads all of them.
LAB_RUNS: Runs = tuple((run.id, run.path) for run in committed_runs())
#: The lab page's URL settings that show each run there.
LAB_QUERY = {run.id: run.query for run in committed_runs()}

#: Relative diagonal spread under which a matrix counts as Toeplitz (rounding is ~1e-15).
TOEPLITZ_TOLERANCE = 1e-9
#: The families whose position is added to the input, and those whose position is a pairwise bias or a rotation: what
#: the live checks expect to be absolute and relative (read from the family registry, :data:`posenc_core.FAMILIES`).
ABSOLUTE = tuple(e for e in COMPARED if FAMILIES[e].kind == "added")
RELATIVE = tuple(e for e in COMPARED if FAMILIES[e].kind in RELATIVE_KINDS)
#: Verdict states → the mark shown (◐ is followed by how far the encoding held, e.g. "◐ 8·L").
MARKS = {"holds": "✓", "until": "◐", "fails": "✗", "not_learned": "○"}
NBSP = "\u00a0"


def mark(verdict: Verdict) -> str:
    r"""A verdict's mark: ✓, ✗, ○, or ◐ followed by how far the encoding held (e.g. "◐ 8·L")."""
    return f"{MARKS[verdict.state]} {verdict.until}·L" if verdict.state == "until" else MARKS[verdict.state]


#: Cells per small multiple: a panel is ~200 px wide, so 96 × 96 is already finer than the screen.
PANEL_CELLS = 96 * 96

PARAMS = (IntParam("length", 64, lo=16, hi=256, step=16),)


def label(encoding: str, lang: str) -> str:
    r"""The encoding's name: the shared ``enc.*`` key, except that this page names the family without position
    "NoPE" (``compare.enc_none``)."""
    return t("compare.enc_none" if FAMILIES[encoding].kind == "none" else f"enc.{encoding}", lang)


@memo
def _matrices(length: int) -> dict[str, np.ndarray]:
    return {encoding: position_score_matrix(encoding, length) for encoding in COMPARED}


@memo
def _residuals(length: int) -> dict[str, float]:
    return {encoding: toeplitz_residual(matrix) for encoding, matrix in _matrices(length).items()}


# --- the lab's committed runs --------------------------------------------------------------------------------------


@memo(budget=RESULTS)
def lab_results(runs: Runs = LAB_RUNS) -> Mapping[str, Mapping[str, Any]]:
    r"""Task id → the committed results file of that task, read once while memory keeps it (a run never changes)."""
    return MappingProxyType({task: read_results(path) for task, path in runs})


@memo(budget=RESULTS)
def lab_measures(runs: Runs = LAB_RUNS) -> Mapping[str, Mapping[str, Mapping[str, Spread]]]:
    r"""Task → encoding → band → what the verdict reads (:func:`posenc_lab.runs.verdict_measures`)."""
    return MappingProxyType(
        {task: {e: verdict_measures(dict(r))[e] for e in ENCODINGS} for task, r in lab_results(runs).items()}
    )


def task_tolerance(task: str, runs: Runs = LAB_RUNS) -> float:
    return verdict_tolerance(lab_results(runs)[task])


@memo(budget=RESULTS)
def lab_verdicts(runs: Runs = LAB_RUNS) -> Mapping[str, Mapping[str, Verdict]]:
    r"""Encoding → task → :class:`~posenc_lab.runs.Verdict`, for every lab encoding and every committed run."""
    per_task = {task: extrapolation_verdicts(dict(results)) for task, results in lab_results(runs).items()}
    return MappingProxyType({e: {task: verdicts[e] for task, verdicts in per_task.items()} for e in ENCODINGS})


def train_length(runs: Runs = LAB_RUNS) -> int:
    r"""The training length L shared by the committed runs."""
    (length,) = {int(results["config"]["train_length"]) for results in lab_results(runs).values()}
    return length


def seeds(runs: Runs = LAB_RUNS) -> int:
    r"""The number of seeds of every committed run."""
    (count,) = {len(results["seeds"]) for results in lab_results(runs).values()}
    return count


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


def _band_label(name: str, lang: str) -> str:
    return t("compare.band_inside", lang) if name == "inside" else t("compare.band", lang, band=name.replace("-", "–"))


@uses()
def extrapolation_figure(v: Values, lang: str) -> go.Figure:
    r"""One panel per committed run: each encoding's band means over seeds, bars from the lowest to the highest."""
    measures = lab_measures()
    panels = []
    for task, per_encoding in measures.items():
        bands = list(next(iter(per_encoding.values())))
        panels.append(
            figs.ExtrapolationPanel(
                title=t(f"compare.facet.{task}", lang),
                bands=tuple(_band_label(name, lang) for name in bands),
                spreads={e: tuple(row[name] for name in bands) for e, row in per_encoding.items()},
                tolerance=task_tolerance(task),
            )
        )
    labels = {e: label(e, lang) for e in ENCODINGS}
    colours = {e: ENCODING_COLOURS[e] for e in ENCODINGS}
    return figs.extrapolation(panels, labels, colours, train_length=train_length(), seeds=seeds(), lang=lang)


def _mark(holds: bool) -> str:
    return "✓" if holds else "✗"


def _lab_link(lang: str, query: str = "") -> str:
    return f"{LAB_PAGE.url_path}?lang={lang}" + (f"&{query}" if query else "")


def extrapolation_cell(encoding: str, lang: str) -> str:
    r"""The table's short verdict: one mark per task, e.g. ``copy ℓ=2 ✓ · copy ℓ=8 ○ · text ✓ · retrieval ◐ 8·L``.

    Each task's name and mark are held together by no-break spaces, so a narrow column (a phone) breaks the cell
    between tasks, never inside one.
    """
    return " · ".join(
        f"{t(f'compare.task.{task}', lang)} {mark(v)}".replace(" ", NBSP)
        for task, v in lab_verdicts()[encoding].items()
    )


def numbers_table(lang: str) -> str:
    r"""Encodings × tasks: each verdict's mark and the number that decided it (see :class:`Verdict`)."""
    head = [t("compare.col_encoding", lang)] + [
        f"[{t(f'compare.task.{task}', lang)}]({_lab_link(lang, LAB_QUERY[task])})" for task, _ in LAB_RUNS
    ]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for encoding, per_task in lab_verdicts().items():
        cells = [f"{mark(v)} {v.value:.3f}" for v in per_task.values()]
        rows.append("| " + " | ".join([f"**{label(encoding, lang)}**", *cells]) + " |")
    caption = t(
        "compare.lab_numbers",
        lang,
        seeds=seeds(),
        tolerance=f"{EXCESS_TOLERANCE:g}",
        learned=f"{LEARNED_TOLERANCE:g}",
        rise=f"{RISE_TOLERANCE:g}",
    )
    return caption + "\n\n" + "\n".join(rows)


@reads("length")
def comparison_table(v: Values, lang: str) -> str:
    r"""The markdown table encodings × properties (the first two columns measured live), then the lab's numbers."""
    residuals = _residuals(v["length"])
    verdicts = lab_verdicts()
    lab = f"[{t('compare.lab_link', lang)}]({_lab_link(lang)})"
    head = [
        t(f"compare.col_{c}", lang)
        for c in ("encoding", "relative", "extrapolates", "linear", "params", "cost", "where", "models")
    ]
    rows = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for e in COMPARED:
        r = residuals[e]
        kind = "relative" if r <= TOEPLITZ_TOLERANCE else "absolute"
        relative = f"{_mark(kind == 'relative')} {t(f'compare.{kind}', lang)} ({r:.1e})"
        extrapolates = f"{extrapolation_cell(e, lang)} · {lab}" if e in verdicts else t("compare.not_in_lab", lang)
        cells = [
            f"**{label(e, lang)}**",
            relative,
            extrapolates,
            linear_cell(e, lang),
            *(t(f"compare.{c}.{e}", lang) for c in ("params", "cost", "where", "models")),
        ]
        rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n\n" + numbers_table(lang)


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


# The lab's checks. Each is a pure function of the committed runs (so a test can hand it other files), wrapped in a
# recipe of the page. A claim is a conjunction of conditions "x ≤ bound" (or "x ≥ bound"); its residual is the largest
# of x / bound (bound / x), so at tolerance 1 it passes exactly when every condition holds. A claim that fails is shown
# with its own sentence (key + "_not"), which says what the numbers show instead: no ✗ line states the claim it failed.


def _claim(key: str, ratios: list[float], fmt: Mapping[str, Any]) -> Check:
    residual = max(ratios)
    return Check(f"compare.{key}" if residual <= 1.0 else f"compare.{key}_not", residual, tolerance=1.0, fmt=dict(fmt))


def _worst_past_l(bands: Mapping[str, Spread]) -> float:
    return max(spread.high for name, spread in bands.items() if name != "inside")


def task_dependence_claim(runs: Runs = LAB_RUNS) -> Check:
    r"""Which encoding extrapolates depends on the task: none holds past L on every run with every seed."""
    verdicts = lab_verdicts(runs)
    held = {e: sum(x.state == "holds" for x in per_task.values()) for e, per_task in verdicts.items()}
    everywhere = sum(count == len(runs) for count in held.values())
    return Check(
        "compare.check_task_dependence" if not everywhere else "compare.check_task_dependence_not",
        float(everywhere),
        tolerance=0.5,  # a count of encodings: the claim holds at 0
        fmt={"tasks": len(runs), "seeds": seeds(runs), "most": max(held.values()), "count": everywhere},
    )


def alibi_local_claim(runs: Runs = LAB_RUNS) -> Check:
    r"""ALiBi holds past L, on every seed and to the last band, on copy ℓ = 2 (loss above the optimum) and on text
    (rise of the loss over inside L)."""
    measures = lab_measures(runs)
    lag, text = _worst_past_l(measures["lag"]["alibi"]), _worst_past_l(measures["text"]["alibi"])
    return _claim(
        "check_alibi_local",
        [lag / EXCESS_TOLERANCE, text / RISE_TOLERANCE],
        {
            "lag": f"{lag:.3f}",
            "text": f"{text:.3f}",
            "tolerance": f"{EXCESS_TOLERANCE:g}",
            "rise": f"{RISE_TOLERANCE:g}",
        },
    )


def retrieval_claim(runs: Runs = LAB_RUNS) -> Check:
    r"""On retrieval NoPE and T5 recall the value out to the last distance on every seed, while ALiBi degrades: in
    the farthest band even its best seed is past the tolerance."""
    bands = lab_measures(runs)["retrieval"]
    held = max(_worst_past_l(bands[e]) for e in ("none", "t5"))
    last = list(bands["alibi"])[-1]
    alibi = bands["alibi"][last].low
    return _claim(
        "check_retrieval",
        [held / EXCESS_TOLERANCE, EXCESS_TOLERANCE / max(alibi, 1e-12)],
        {
            "held": f"{held:.3f}",
            "alibi": f"{alibi:.3f}",
            "band": last.replace("-", "–"),
            "far": band_edges(last)[1],
            "tolerance": f"{EXCESS_TOLERANCE:g}",
        },
    )


def relative_not_enough_claim(runs: Runs = LAB_RUNS) -> Check:
    r"""Relative is not extrapolating: RoPE and T5 learn copy ℓ = 2 inside L (every seed within the tolerance), yet
    at 2–4·L every seed of both is above it (T5's best seed is still within it at 1–2·L, so that band is not used)."""
    bands = lab_measures(runs)["lag"]
    inside = max(bands[e]["inside"].high for e in ("rope", "t5"))
    beyond = min(bands[e]["2-4"].low for e in ("rope", "t5"))
    return _claim(
        "check_relative_not_enough",
        [inside / EXCESS_TOLERANCE, EXCESS_TOLERANCE / max(beyond, 1e-12)],
        {"inside": f"{inside:.3f}", "beyond": f"{beyond:.3f}", "tolerance": f"{EXCESS_TOLERANCE:g}"},
    )


@uses()
def check_task_dependence(v: Values) -> Check:
    r"""No encoding holds past L on all four committed runs with every seed."""
    return task_dependence_claim()


@uses()
def check_alibi_local(v: Values) -> Check:
    r"""ALiBi holds past L on copy ℓ = 2 and on text, every seed, to 8·L."""
    return alibi_local_claim()


@uses()
def check_retrieval(v: Values) -> Check:
    r"""On retrieval NoPE and T5 hold to 32·L on every seed; ALiBi's best seed degrades at 16–32·L."""
    return retrieval_claim()


@uses()
def check_relative_not_enough(v: Values) -> Check:
    r"""RoPE and T5 learn copy ℓ = 2 inside L, and every seed of both fails at 2–4·L."""
    return relative_not_enough_claim()


VIEW = View(
    page_id="compare",
    params=PARAMS,
    figures={"matrices": matrices_figure, "extrapolation": extrapolation_figure},
    sweeps={"matrices": "length"},
    static={"extrapolation": "reads no parameter"},
    checks={
        "relative": check_relative,
        "absolute": check_absolute,
        "linear": check_linear,
        "rank": check_rank,
        "task_dependence": check_task_dependence,
        "alibi_local": check_alibi_local,
        "retrieval": check_retrieval,
        "relative_not_enough": check_relative_not_enough,
    },
    explain=Explain(
        latex=(
            r"\text{added: } s_{ij} = \tfrac{1}{\sqrt d}\,(x + p_i)W_Q\,W_K^\top(x + p_j)^\top",
            r"\text{relative: } s_{ij} = \tfrac{1}{\sqrt d}\,q^\top R_{j-i}\,k + b_{j-i}",
            r"\text{relative} \iff s_{ij} = f(j - i)",
            r"\rho = \frac{\max_\delta\,(\max_{j-i=\delta} s - \min_{j-i=\delta} s)}{\max s - \min s}",
            r"e_{s,b} = \operatorname{mean}_{t \in b}\,\big(\ell^{(s)}_t - \ell^*_t\big)",
            r"b \in \{[L, 2L),\ [2L, 4L),\ \dots\}",
            r"\checkmark \iff \max_{s}\, e_{s,b} \le \tau \ \ \forall\, b \ge L",
            r"o_i = \frac{\sum_j e^{b_{j-i}}\,\phi(q_i)^\top\phi(k_j)\,v_j}"
            r"{\sum_j e^{b_{j-i}}\,\phi(q_i)^\top\phi(k_j)}",
            r"S_i = e^{-m}S_{i-1} + \phi(k_i)\,v_i^\top,\quad z_i = e^{-m}z_{i-1} + \phi(k_i),\quad "
            r"o_i = \frac{\phi(q_i)^\top S_i}{\phi(q_i)^\top z_i}",
        ),
        sources=(
            position_score_matrix,
            toeplitz_residual,
            bias_route_residual,
            toeplitz_linear_attention,
            alibi_linear_attention,
            numerical_rank,
            band_table,
            verdict_measures,
            verdict,
        ),
        paper="Vaswani et al. 2017, arXiv:1706.03762; Shaw et al. 2018, arXiv:1803.02155; Raffel et al. 2020 (T5), "
        "arXiv:1910.10683; Su et al. 2021 (RoPE), arXiv:2104.09864; Press et al. 2021 (ALiBi), arXiv:2108.12409; "
        "Katharopoulos et al. 2020 (linear attention), arXiv:2006.16236; Luo et al. 2021 (Toeplitz by FFT), "
        "NeurIPS, arXiv:2106.12566",
    ),
)

PAGE = PageEntry("pages/13_Compare.py", VIEW, preview="matrices")
