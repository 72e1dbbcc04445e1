r"""Page 2 — first attempts: the integer index, the index normalised to [0, 1], and binary bits.

Each is a reasonable idea with a flaw the page measures: the integer grows without bound; the normalised step
1/(L − 1) depends on the length (0.5 for three tokens, 1/3 for four); binary codes are bounded and
length-independent, but neighbours jump (7 → 8 flips four bits) and ``bits`` bits run out at 2^bits positions.
Sinusoids (page 3) are the smooth, bounded, unlimited version of the binary odometer.
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from posenc_core import (
    binary_positions,
    integer_positions,
    neighbour_distances,
    normalized_positions,
    sinusoidal,
)

from ...lesson import Check, Explain, PageEntry, Values, View, uses
from ...memo import memo
from ...state import BoolParam, IntParam
from . import figures as figs

#: The comparison in mmmwhy's 「Transformer 中的 position embedding 的设计」: three tokens against four.
SHORT, LONG = 3, 4

PARAMS = (
    IntParam("length", 16, lo=2, hi=256),
    IntParam("bits", 4, lo=1, hi=10),
    BoolParam("wrap", False),
)


@memo
def _binary(length: int, bits: int, wrap: bool) -> np.ndarray:
    return binary_positions(length, bits, wrap=wrap)  # (L, bits); refuses L > 2^bits unless wrap


@memo
def _neighbours(length: int, bits: int, wrap: bool) -> tuple[np.ndarray, np.ndarray]:
    r"""Distances between neighbouring positions: binary code, and a sinusoidal code of the same (even) width."""
    width = max(2, bits + bits % 2)
    return neighbour_distances(_binary(length, bits, wrap)), neighbour_distances(sinusoidal(length, width))


@uses("length")
def integer_figure(v: Values, lang: str) -> go.Figure:
    return figs.integer_positions(integer_positions(v["length"]), lang=lang)


@uses("length")
def normalized_figure(v: Values, lang: str) -> go.Figure:
    lengths = sorted({SHORT, LONG, v["length"]})
    return figs.normalized_positions({n: normalized_positions(n) for n in lengths}, lang=lang)


@uses("length", "bits", "wrap")
def binary_figure(v: Values, lang: str) -> go.Figure:
    return figs.binary_bits(_binary(v["length"], v["bits"], v["wrap"]), lang=lang)


@uses("length", "bits", "wrap")
def jumps_figure(v: Values, lang: str) -> go.Figure:
    binary, sines = _neighbours(v["length"], v["bits"], v["wrap"])
    return figs.neighbour_jumps(binary, sines, lang=lang)


@uses()
def check_step(v: Values) -> Check:
    short, long = normalized_positions(SHORT), normalized_positions(LONG)
    residual = abs((short[1] - short[0]) - (long[1] - long[0]))  # same neighbours, different gap
    return Check("first.check_step", residual, expect_zero=False, fmt={"short": short[1], "long": long[1]})


@uses("length", "bits", "wrap")
def check_jumps(v: Values) -> Check:
    binary, sines = _neighbours(v["length"], v["bits"], v["wrap"])
    spread = float(np.ptp(sines))
    return Check("first.check_jumps", spread, fmt={"lo": binary.min(), "hi": binary.max()})


VIEW = View(
    page_id="first",
    params=PARAMS,
    figures={
        "integer": integer_figure,
        "normalized": normalized_figure,
        "binary": binary_figure,
        "jumps": jumps_figure,
    },
    sweeps={"integer": "length", "normalized": "length", "binary": "bits", "jumps": "bits"},
    checks={"step": check_step, "jumps": check_jumps},
    explain=Explain(
        latex=(
            r"p_{\text{int}} = p, \qquad p_{\text{norm}} = \frac{p}{L-1}",
            r"\begin{aligned} b_k(p) &= \left\lfloor p / 2^k \right\rfloor \bmod 2, \\ k &= 0 \dots \text{bits} - 1"
            r"\end{aligned}",
        ),
        sources=(integer_positions, normalized_positions, binary_positions),
        paper="Kazemnejad 2019, *Transformer Architecture: The Positional Encoding*; Vaswani et al. 2017, §3.5",
    ),
)

PAGE = PageEntry("pages/2_First_attempts.py", VIEW, preview="binary")
