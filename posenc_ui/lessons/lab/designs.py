r"""Page 12's section on the three 2025 designs the lab trains (p-RoPE, the RoPE/NoPE hybrid, FoX): what the four
committed runs show about each, in their own numbers.

Each claim is a pure function of the committed runs (a test can hand it other files) and reads them through
:mod:`posenc_lab.runs` alone: the verdict rule (:func:`~posenc_lab.runs.extrapolation_verdicts`) for how far a model
holds past L, :func:`~posenc_lab.runs.band_table` for its loss inside L. A claim is a conjunction of conditions; when
one fails the page prints the claim's own ``_not`` sentence, which says what the numbers show instead. Verdicts are
written with Compare's marks (page 13): ✓ holds to the last band, ◐ k·L holds to k·L, ✗ fails right past L, ○ did not
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
    r"""Compare's mark for a verdict: ✓, ✗, ○, or ◐ with how far it held (◐ 4·L, a no-break space between: a phone
    never breaks the mark)."""
    return f"{MARKS['until']}\u00a0{verdict.until}·L" if verdict.state == "until" else MARKS[verdict.state]


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


def far_accuracy(runs: Runs, encoding: str) -> float:
    r"""The retrieval run's mean accuracy over seeds in its farthest band (16–32·L)."""
    table = band_table(dict(results(runs)["retrieval"]), "accuracy")[encoding]
    return list(table.values())[-1].mean


def hybrid_claim(runs: Runs = RUNS) -> Check:
    r"""The hybrid keeps RoPE's quality inside L on the tasks with an optimum, not on text, and not NoPE's retrieval;
    past L it lands between RoPE and NoPE.

    Conditions: on every run with an optimum where RoPE learned the task (worst seed within
    :data:`LEARNED_TOLERANCE` inside L), so did the hybrid; on text its worst seed inside L is more than
    :data:`RISE_TOLERANCE` above RoPE's; on retrieval it holds at least as far as RoPE and less far than NoPE, and in
    the farthest band it recalls more than RoPE does (mean accuracy over seeds); its mark is RoPE's on every run."""
    ratios = []
    for run in _with_optimum(runs):
        if inside(runs, run, "rope") <= LEARNED_TOLERANCE:
            ratios.append(inside(runs, run, "hybrid") / LEARNED_TOLERANCE)
    text = _text(runs)
    text_gap = inside(runs, text, "hybrid") - inside(runs, text, "rope")
    ratios.append(RISE_TOLERANCE / max(text_gap, 1e-12))
    retrieval = verdicts(runs)["retrieval"]
    between = reach(retrieval["rope"]) <= reach(retrieval["hybrid"]) < reach(retrieval["none"])
    recalls = {"hybrid": far_accuracy(runs, "hybrid"), "rope": far_accuracy(runs, "rope")}
    recalls["none"] = far_accuracy(runs, "none")
    ratios += [0.0 if between else 2.0, 0.0 if recalls["hybrid"] > recalls["rope"] else 2.0]
    ratios.append(0.0 if marks(runs, "hybrid") == marks(runs, "rope") else 2.0)  # past L its marks are RoPE's
    fmt = {f"{run}_inside": f"{inside(runs, run, 'hybrid'):.2f}" for run in results(runs)}
    fmt |= {f"{run}_rope": f"{inside(runs, run, 'rope'):.2f}" for run in results(runs)}
    fmt |= {f"{run}_mark": m for run, m in marks(runs, "hybrid").items()}
    fmt |= {f"{run}_rope_mark": m for run, m in marks(runs, "rope").items()}
    fmt |= {f"{run}_none_mark": m for run, m in marks(runs, "none").items()}
    fmt |= {f"recall_{e}": f"{value:.2f}" for e, value in recalls.items()}
    fmt |= {"text_gap": f"{text_gap:.2f}", "rise": f"{RISE_TOLERANCE:g}"}
    return _claim("designs_hybrid", ratios, fmt)


def p_rope_gaps(runs: Runs = RUNS) -> tuple[float, float]:
    r"""(held, beyond): the largest gap between p-RoPE's and RoPE's band means over seeds in the bands where RoPE
    still holds (inside L included) and in the bands past its failure, over every run (nats; text: nats per byte)."""
    held, beyond = [0.0], [0.0]
    for run, r in results(runs).items():
        table = band_table(dict(r), "loss")
        rope = verdicts(runs)[run]["rope"]
        fails_from = None if rope.state in ("holds", "not_learned") else rope.band
        past = False
        for band in table["rope"]:
            past = past or band == fails_from
            gap = abs(table["p_rope"][band].mean - table["rope"][band].mean)
            (beyond if past else held).append(gap)
    return max(held), max(beyond)


def p_rope_claim(runs: Runs = RUNS) -> Check:
    r"""p-RoPE extrapolates no further than RoPE: on every run its verdict is RoPE's. Where RoPE holds the two agree to
    within :data:`EXCESS_TOLERANCE` in every band; past RoPE's failure they may part (the page says by how much)."""
    per = verdicts(runs)
    differ = [run for run in per if mark(per[run]["p_rope"]) != mark(per[run]["rope"])]
    held, beyond = p_rope_gaps(runs)
    far = band_table(dict(results(runs)["retrieval"]), "loss")
    last = list(far["rope"])[-1]
    fmt = {f"{run}_mark": m for run, m in marks(runs, "p_rope").items()}
    fmt |= {f"{run}_rope_mark": m for run, m in marks(runs, "rope").items()}
    fmt |= {
        "held": f"{held:.3f}",
        "beyond": f"{beyond:.2f}",
        "far_p_rope": f"{far['p_rope'][last].mean:.2f}",
        "far_rope": f"{far['rope'][last].mean:.2f}",
        "band": last.replace("-", "–"),
        "tolerance": f"{EXCESS_TOLERANCE:g}",
        "differ": len(differ),
        "runs": len(per),
    }
    return _claim("designs_p_rope", [2.0 if differ else 0.0, held / EXCESS_TOLERANCE], fmt)


def fox_claim(runs: Runs = RUNS) -> Check:
    r"""FoX lands beside ALiBi, its limit when every gate is equal: the same mark on every run but retrieval, where it
    holds no further than ALiBi; and on text it has the lowest loss inside L of all the lab's models (mean over
    seeds), and no seed's loss rises past L in any band (the verdict's deciding value is ≤ 0)."""
    per = verdicts(runs)
    text = _text(runs)
    same = [run for run in per if run != "retrieval" and mark(per[run]["fox"]) != mark(per[run]["alibi"])]
    table = band_table(dict(results(runs)[text]), "loss")
    means = {e: row["inside"].mean for e, row in table.items()}
    best = min(means, key=means.get)
    others = dict(means)
    others.pop("fox")
    runner_up = min(others, key=others.get)
    ratios = [
        2.0 if same else 0.0,
        0.0 if reach(per["retrieval"]["fox"]) <= reach(per["retrieval"]["alibi"]) else 2.0,
        0.0
        if means["fox"] < others[runner_up] and per[text]["fox"].state == "holds" and per[text]["fox"].value <= 0
        else 2.0,
    ]
    fmt = {f"{run}_mark": m for run, m in marks(runs, "fox").items()}
    fmt |= {f"{run}_alibi_mark": m for run, m in marks(runs, "alibi").items()}
    fmt |= {"text_fox": f"{means['fox']:.2f}", "text_next": f"{means[runner_up]:.2f}"}
    fmt |= {"text_rise": f"{per[text]['fox'].value:+.3f}"}
    return Check(
        "lab.designs_fox" if max(ratios) <= 1.0 else "lab.designs_fox_not",
        max(ratios),
        tolerance=1.0,
        fmt=fmt,
        fmt_keys={"next": f"enc.{runner_up}", "best": f"enc.{best}"},
    )


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
