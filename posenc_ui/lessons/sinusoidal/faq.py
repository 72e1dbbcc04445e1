r"""Page 3's frequently asked questions, each answered on numbers from :mod:`posenc_core` (Kazemnejad 2019, FAQ):
why the code holds both sin and cos, where position lives once it is added to the word, and how it reaches later
layers.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from posenc_core import PositionReadout, linear_shift_residual, position_readout, residual_stream_probe, sinusoidal

from ...lesson import Check, Values, uses
from ...memo import memo
from . import figures_faq as figs

#: The sin-and-cos question on a small table (the least-squares fit costs L·d²; the answer does not depend on size).
SHIFT_LENGTH, SHIFT_DIM, SHIFT_MAX_OFFSET = 256, 16, 64
#: The depth demo: positions, width and blocks (L ≥ 2(d + 2) for a held-out probe; 12 blocks, BERT-base's depth).
PROBE_LENGTH, PROBE_DIM, PROBE_BLOCKS = 1024, 64, 12
#: The claim, with margins from eight seeds (kept 0.48–0.57 of the input's R², lost ≤ 0.06 from block 6 on).
KEPT_SHARE, LOST_CEILING, LOST_FROM = 0.4, 0.1, 6
#: The sum claim: no linear map reaches the curve decoder (ceiling 0.58 against 0.96 at seed 0: the ratio 0.60 leaves
#: room below this bound for any draw, the ceiling does not depend on it).
LINEAR_SHARE = 0.75


@memo
def _shift_residuals(base: float, offset: int) -> tuple[float, float]:
    table = sinusoidal(SHIFT_LENGTH, SHIFT_DIM, base=base)  # (L, d), interleaved (sin, cos)
    return linear_shift_residual(table, offset), linear_shift_residual(table[:, 0::2], offset)


@uses("base", "offset")
def check_sin_and_cos(v: Values) -> Check:
    r"""One matrix shifts the full code; none shifts its sines alone (the residual shown beside)."""
    offset = min(v["offset"], SHIFT_MAX_OFFSET)
    full, sines = _shift_residuals(v["base"], offset)
    fmt = {"k": offset, "sines": f"{sines:.2f}", "length": SHIFT_LENGTH, "dim": SHIFT_DIM}
    return Check("sinusoidal.check_sin_and_cos", full, tolerance=1e-9, fmt=fmt)


@memo
def _probes() -> dict[bool, np.ndarray]:
    r"""Residual stream on (True) or off (False) → R² of the position code (row 0) and of the words (row 1)."""
    table = sinusoidal(PROBE_LENGTH, PROBE_DIM)
    return {res: residual_stream_probe(table, layers=PROBE_BLOCKS, residual=res, read="both") for res in (True, False)}


def _depth() -> tuple[np.ndarray, np.ndarray]:
    probes = _probes()
    return probes[True][0], probes[False][0]


def _words() -> tuple[np.ndarray, np.ndarray]:
    r"""The same probes reading the word vectors instead of the position code (same draws, same blocks)."""
    probes = _probes()
    return probes[True][1], probes[False][1]


@memo
def _readout() -> PositionReadout:
    return position_readout(sinusoidal(PROBE_LENGTH, PROBE_DIM))


@uses()
def check_sum(v: Values) -> Check:
    r"""A linear map does not separate word from position: the probe's R² sits under the ceiling of every linear map,
    which stays under :data:`LINEAR_SHARE` of what a decoder knowing the curve recovers. Residual: the larger of
    probe / ceiling (≤ 1 up to sampling) and ceiling / (share · curve)."""
    r = _readout()
    residual = max(r.linear / r.ceiling, r.ceiling / (LINEAR_SHARE * r.curve))
    fmt = {
        "linear": f"{r.linear:.2f}",
        "ceiling": f"{r.ceiling:.2f}",
        "curve": f"{r.curve:.2f}",
        "length": f"{PROBE_LENGTH:,}",
        "dim": PROBE_DIM,
    }
    return Check("sinusoidal.check_sum", residual, tolerance=1.0, fmt=fmt)


@uses()
def depth_figure(v: Values, lang: str) -> go.Figure:
    kept, lost = _depth()
    return figs.probe_depth(kept, lost, lang=lang)


@uses()
def check_depth(v: Values) -> Check:
    r"""Kept ≥ 40 % of the input's R² after every block, lost ≤ 0.1 from block 6 on: residual = the larger ratio."""
    kept, lost = _depth()
    residual = max(KEPT_SHARE * kept[0] / kept[-1], lost[LOST_FROM:].max() / LOST_CEILING)
    words_kept, words_lost = _words()
    fmt = {
        "start": f"{kept[0]:.2f}",
        "kept": f"{kept[-1]:.2f}",
        "lost": f"{lost[-1]:.2f}",
        "blocks": PROBE_BLOCKS,
        "at": LOST_FROM,
        "lost_at": f"{lost[LOST_FROM]:.2f}",
        "word_start": f"{words_kept[0]:.2f}",
        "word_kept": f"{words_kept[-1]:.2f}",
        "word_lost_at": f"{words_lost[LOST_FROM]:.2f}",
    }
    return Check("sinusoidal.check_depth", residual, tolerance=1.0, fmt=fmt)


FIGURES = {"depth": depth_figure}
CHECKS = {"sin_and_cos": check_sin_and_cos, "sum": check_sum, "depth": check_depth}
STATIC = {"depth": "reads no parameter: a fixed demonstration (d = 64, 1024 positions, 12 random blocks)"}
