r"""Page 11's section on the three 2025 designs the lab trains (p-RoPE, the RoPE/NoPE hybrid, FoX): what the four
committed runs show about each, in their own numbers.

Each claim is a pure function of the committed runs (a test can hand it other files) and reads them through
:mod:`posenc_lab.runs` alone: the verdict rule (:func:`~posenc_lab.runs.extrapolation_verdicts`) for how far a model
holds past L, :func:`~posenc_lab.runs.band_table` for its loss inside L. A claim is a conjunction of conditions; when
one fails the page prints the claim's own ``_not`` sentence, which says what the numbers show instead. Verdicts are
written with Compare's marks (page 12): ✓ holds to the last band, ◐ k·L holds to k·L, ✗ fails right past L, ○ did not
learn the task inside L.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from posenc_lab.runs import (
    EXCESS_TOLERANCE,
    LEARNED_TOLERANCE,
    RISE_TOLERANCE,
    Verdict,
    band_table,
    committed_runs,
    extrapolation_verdicts,
    read_results,
)

from ...lesson import Check, Values, uses
from ...memo import RESULTS, memo

Runs = tuple[tuple[str, Path], ...]
#: The committed runs, (run id, file), in the registry's order of tasks (lag, lag8, retrieval, text).
RUNS: Runs = tuple((run.id, run.path) for run in committed_runs())
MARKS = {"holds": "✓", "until": "◐", "fails": "✗", "not_learned": "○"}


def reach(verdict: Verdict) -> float:
    r"""How far past L a verdict holds, as a number to compare: 0 not learned, 1 fails right past L, k for "holds to
    k·L", ∞ for holds to the last band."""
    return {"not_learned": 0.0, "fails": 1.0, "holds": math.inf}.get(verdict.state, float(verdict.until))


def mark(verdict: Verdict) -> str:
    r"""Compare's mark for a verdict: ✓, ✗, ○, or ◐ with how far it held (◐ 4·L)."""
    return f"{MARKS['until']} {verdict.until}·L" if verdict.state == "until" else MARKS[verdict.state]


@memo(budget=RESULTS)
def results(runs: Runs = RUNS) -> Mapping[str, Mapping[str, Any]]:
    return MappingProxyType({run: read_results(path) for run, path in runs})


@memo(budget=RESULTS)
def verdicts(runs: Runs = RUNS) -> Mapping[str, Mapping[str, Verdict]]:
    r"""Run id → encoding → verdict."""
    return MappingProxyType({run: extrapolation_verdicts(dict(r)) for run, r in results(runs).items()})


def inside(runs: Runs, run: str, encoding: str) -> float:
    r"""The worst seed's mean loss inside L: above the optimum where the task has one (nats), else the loss (text)."""
    return band_table(dict(results(runs)[run]), "loss")[encoding]["inside"].high


def marks(runs: Runs, encoding: str) -> dict[str, str]:
    r"""Run id → the encoding's mark on that run."""
    return {run: mark(per[encoding]) for run, per in verdicts(runs).items()}


def _claim(key: str, ratios: list[float], fmt: Mapping[str, Any]) -> Check:
    residual = max(ratios)
    return Check(f"lab.{key}" if residual <= 1.0 else f"lab.{key}_not", residual, tolerance=1.0, fmt=dict(fmt))


def _with_optimum(runs: Runs) -> list[str]:
    return [run for run, r in results(runs).items() if r.get("optimal_loss") is not None]


def _text(runs: Runs) -> str:
    (run,) = [run for run, r in results(runs).items() if r.get("optimal_loss") is None]
    return run


def hybrid_claim(runs: Runs = RUNS) -> Check:
    r"""The hybrid keeps RoPE's quality inside L (every run with an optimum: its worst seed learned the task, within
    :data:`LEARNED_TOLERANCE`, wherever RoPE's did; text: its worst seed inside L no more than
    :data:`RISE_TOLERANCE` above RoPE's) and NoPE's retrieval (it holds as far as NoPE does)."""
    ratios = []
    for run in _with_optimum(runs):
        if inside(runs, run, "rope") <= LEARNED_TOLERANCE:
            ratios.append(inside(runs, run, "hybrid") / LEARNED_TOLERANCE)
    text = _text(runs)
    ratios.append(1.0 + (inside(runs, text, "hybrid") - inside(runs, text, "rope")) / RISE_TOLERANCE)
    retrieval = verdicts(runs)["retrieval"]
    ratios.append(2.0 if reach(retrieval["hybrid"]) < reach(retrieval["none"]) else 0.0)
    fmt = {f"{run}_inside": f"{inside(runs, run, 'hybrid'):.2f}" for run in _with_optimum(runs)}
    fmt |= {f"{run}_rope": f"{inside(runs, run, 'rope'):.2f}" for run in _with_optimum(runs)}
    fmt |= {
        "text_inside": f"{inside(runs, text, 'hybrid'):.2f}",
        "text_rope": f"{inside(runs, text, 'rope'):.2f}",
        "retrieval": mark(retrieval["hybrid"]),
        "retrieval_none": mark(retrieval["none"]),
        "retrieval_rope": mark(retrieval["rope"]),
    }
    fmt |= {f"{run}_mark": m for run, m in marks(runs, "hybrid").items()}
    fmt |= {f"{run}_rope_mark": m for run, m in marks(runs, "rope").items()}
    return _claim("designs_hybrid", ratios, fmt)


def p_rope_gap(runs: Runs = RUNS) -> float:
    r"""The largest gap between p-RoPE's and RoPE's mean over seeds, over every band of every run (nats; text: nats
    per byte), the loss above the optimum where the task has one."""
    gaps = []
    for r in results(runs).values():
        table = band_table(dict(r), "loss")
        gaps += [abs(table["p_rope"][band].mean - table["rope"][band].mean) for band in table["rope"]]
    return max(gaps)


def p_rope_claim(runs: Runs = RUNS) -> Check:
    r"""p-RoPE is RoPE in these models: on every run its verdict is RoPE's, and no band's mean over seeds differs from
    RoPE's by more than :data:`EXCESS_TOLERANCE` (the verdict's own tolerance)."""
    per = verdicts(runs)
    differ = [run for run in per if mark(per[run]["p_rope"]) != mark(per[run]["rope"])]
    gap = p_rope_gap(runs)
    fmt = {f"{run}_mark": m for run, m in marks(runs, "p_rope").items()}
    fmt |= {f"{run}_rope_mark": m for run, m in marks(runs, "rope").items()}
    fmt |= {"gap": f"{gap:.3f}", "tolerance": f"{EXCESS_TOLERANCE:g}", "differ": len(differ), "runs": len(per)}
    return _claim("designs_p_rope", [2.0 if differ else 0.0, gap / EXCESS_TOLERANCE], fmt)


def fox_claim(runs: Runs = RUNS) -> Check:
    r"""Where FoX lands: its mark on every run, beside ALiBi's (its limit when every gate is equal)."""
    fmt = {f"{run}_mark": m for run, m in marks(runs, "fox").items()}
    fmt |= {f"{run}_alibi_mark": m for run, m in marks(runs, "alibi").items()}
    fmt |= {f"{run}_inside": f"{inside(runs, run, 'fox'):.2f}" for run in results(runs)}
    return _claim("designs_fox", [0.0], fmt)


@uses()
def check_hybrid(v: Values) -> Check:
    r"""The hybrid keeps RoPE's inside-L quality and NoPE's retrieval (the four committed runs, every seed)."""
    return hybrid_claim()


@uses()
def check_p_rope(v: Values) -> Check:
    r"""p-RoPE against RoPE past L on the four committed runs."""
    return p_rope_claim()


@uses()
def check_fox(v: Values) -> Check:
    r"""FoX's verdict on every committed run, beside ALiBi's."""
    return fox_claim()
