r"""Page 6 (RoPE), sections 4 and 5: what happens far away — long-range decay, periods and near repeats.

Su's bound on :math:`|\sum_i h_i e^{\mathrm{i} r\theta_i}|` against distance (RoFormer §3.4.3, with its published
values as a live check) beside random vectors, which do not decay; the period :math:`T_i = 2\pi/\theta_i` of each
pair beside the periods misprinted in the article 「从零学习大模型--旋转位置编码」; and how adding pairs pushes
the first near-repeat of the "30° per token" clock of the WeChat article 「Transformer位置编码问题」 out of reach.
Recipes and checks only: :mod:`.view` puts them into the page's view.
"""

from __future__ import annotations

import math

import numpy as np
import plotly.graph_objects as go

from posenc_core import (
    RopeDecayTable,
    rope_angles,
    rope_decay_bound,
    rope_decay_random_expected,
    rope_decay_random_z,
    rope_near_repeats,
    rope_period_gaps,
    rope_wavelengths,
)

from ...lesson import Check, Values, uses
from ...memo import memo
from . import figures as figs
from .inputs import inv_freq_for, query_key

#: ~1.5k log-spaced distances up to 10⁶ are what a screen shows; the core's curves are chunked anyway.
DECAY_POINTS, DECAY_REACH = 1500, 10**6
RANDOM_SAMPLES = 128
#: The number of standard errors a sample mean of a zero-mean score may stray from 0 and still be "0".
NO_DECAY_Z = 5.0
#: RoFormer §3.4.3 (Fig. 2), d = 128, base 10⁴: Su's bound at distances 0, 100, 256 (docs/references.md).
PUBLISHED_DECAY = {0: 32.5, 100: 10.23, 256: 6.54}
PUBLISHED_DIM, PUBLISHED_BASE = 128, 10000.0
#: The example of the article 「从零学习大模型--旋转位置编码」: d = 512, base 10⁴; the periods it prints, and the pairs
#: that really exist.
SYLLABUS_DIM = 512
SYLLABUS_PRINTED = {0: 6.28, 128: 316.23, 256: 15811.39}
SYLLABUS_PAIRS = (0, 128, 255)
#: The clock of the WeChat article 「Transformer位置编码问题」: 30° per token; a second pair turning 1 rad per token
#: (RoPE's pair 0) beside it.
TOY_THETAS = (math.pi / 6, 1.0)
TOY_POSITIONS, TOY_REPEAT = 24, 12
REPEAT_PAIRS, REPEAT_REACH = 12, 10**6


# --- 4. long-range decay -----------------------------------------------------------------------------------------


@memo
def _distances() -> np.ndarray:
    return np.unique(np.round(np.logspace(0, math.log10(DECAY_REACH), DECAY_POINTS)))  # (~1.1k,) 1 … 10⁶


@memo
def _table(dim: int, base: float) -> RopeDecayTable:
    r"""The phasors of every decay curve of (d, base), made once: for the bound, the all-ones curve and each seed."""
    return RopeDecayTable(_distances(), inv_freq_for(dim, base))


@uses("dim", "base")
def decay_figure(v: Values, lang: str) -> go.Figure:
    table, inv_freq = _table(v["dim"], v["base"]), inv_freq_for(v["dim"], v["base"])
    marks = dict(zip(PUBLISHED_DECAY, rope_decay_bound(list(PUBLISHED_DECAY), inv_freq), strict=True))
    # an all-ones q and k: each pair (1, 1) scores 2 cos rθᵢ, twice the core's unit-pair curve (its docstring)
    return figs.decay(table.distances, table.bound(), 2.0 * table.all_ones(), marks, lang=lang)


@memo
def _random(dim: int, base: float, seed: int, same_vector: bool) -> tuple[np.ndarray, np.ndarray]:
    return _table(dim, base).random(n_samples=RANDOM_SAMPLES, seed=seed, same_vector=same_vector)


@uses("dim", "base", "seed", "same_vector")
def random_figure(v: Values, lang: str) -> go.Figure:
    mean, std = _random(v["dim"], v["base"], v["seed"], v["same_vector"])
    r = _distances()
    expected = rope_decay_random_expected(r, inv_freq_for(v["dim"], v["base"]), same_vector=v["same_vector"])
    return figs.random_band(r, mean, std, expected, same_vector=v["same_vector"], lang=lang)


@uses()
def check_published(v: Values) -> Check:
    bound = rope_decay_bound(list(PUBLISHED_DECAY), inv_freq_for(PUBLISHED_DIM, PUBLISHED_BASE))
    residual = float(np.max(np.abs(bound - list(PUBLISHED_DECAY.values()))))
    values = " / ".join(f"{b:.2f}" for b in bound)
    return Check("rope.check_published", residual, tolerance=0.005, fmt={"values": values})


@uses("dim", "base", "seed")
def check_no_decay(v: Values) -> Check:
    mean, std = _random(v["dim"], v["base"], v["seed"], False)
    z = rope_decay_random_z(mean, std, n_samples=RANDOM_SAMPLES)  # the sample mean in standard errors
    return Check("rope.check_no_decay", float(np.max(z)), tolerance=NO_DECAY_Z, fmt={"samples": RANDOM_SAMPLES})


# --- 5. periods and near repeats ---------------------------------------------------------------------------------


@uses("dim", "base")
def periods_figure(v: Values, lang: str) -> go.Figure:
    wavelengths = rope_wavelengths(inv_freq_for(v["dim"], v["base"]))
    syllabus = rope_wavelengths(inv_freq_for(SYLLABUS_DIM, PUBLISHED_BASE))[list(SYLLABUS_PAIRS)]
    return figs.periods(
        np.arange(wavelengths.shape[0]),
        wavelengths,
        v["dim"],
        dict(zip(SYLLABUS_PAIRS, syllabus, strict=True)),
        SYLLABUS_PRINTED,
        SYLLABUS_DIM,
        lang=lang,
    )


@uses("dim", "base", "seed")
def check_period(v: Values) -> Check:
    r"""After :math:`T_i` tokens pair i is back where it started: rotate x to position :math:`T_i`, compare pair i."""
    gaps = rope_period_gaps(query_key(v["dim"], v["seed"])[0], inv_freq_for(v["dim"], v["base"]))  # (d/2,)
    return Check("rope.check_period", float(np.max(gaps)), tolerance=1e-6, fmt={"pairs": gaps.shape[0]})


@uses()
def toy_figure(v: Values, lang: str) -> go.Figure:
    angles = rope_angles(np.arange(TOY_POSITIONS, dtype=np.float64), TOY_THETAS)  # (24, 2)
    return figs.toy_clock(angles, (0, TOY_REPEAT), lang=lang)


@memo
def _repeats(dim: int, base: float, tolerance: int) -> tuple[int | None, ...]:
    pairs = inv_freq_for(dim, base)[:REPEAT_PAIRS]
    return rope_near_repeats(pairs, tolerance=math.radians(tolerance), max_distance=REPEAT_REACH)


@uses("dim", "base", "tolerance")
def repeats_figure(v: Values, lang: str) -> go.Figure:
    return figs.near_repeats(_repeats(v["dim"], v["base"], v["tolerance"]), REPEAT_REACH, v["tolerance"], lang=lang)


@uses("tolerance")
def check_toy(v: Values) -> Check:
    (alone,) = rope_near_repeats(TOY_THETAS[:1], tolerance=1e-9, max_distance=10 * TOY_REPEAT)
    together = rope_near_repeats(TOY_THETAS, tolerance=math.radians(v["tolerance"]), max_distance=REPEAT_REACH)[1]
    fmt = {
        "alone": alone,
        "together": f"{together:,}" if together else f"> {REPEAT_REACH:,}",
        "tolerance": v["tolerance"],
    }
    return Check("rope.check_toy", float(abs((alone or 0) - TOY_REPEAT)), fmt=fmt)
