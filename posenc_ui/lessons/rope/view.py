r"""Page 6 — rotary position embedding, RoPE (Su et al. 2021, RoFormer, arXiv:2104.09864).

Clock hands: pair i of a vector at position m is turned by m·θ_i, a complex number times
:math:`e^{\mathrm{i}m\theta_i}`. The score of q at m and k at n is :math:`q_0 \cdot k_{n-m}`, checked on random
vectors. Half-split and interleaved pairing are one rotation in two orders of the dimensions — and mixing them
breaks a model without a sound. Su's long-range decay beside random vectors (which do not decay), the period of
each pair with the periods misprinted in the article 「从零学习大模型--旋转位置编码」, and how adding pairs pushes the
first near-repeat of the "30° per token" clock of the WeChat article 「Transformer位置编码问题」 out of reach.

The recipes and checks of those last two sections (decay, periods) live in :mod:`.long_range`, and the inputs
every section shares (θ_i, the seeded q and k) in :mod:`.inputs`; this module holds the rest and the view.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go

from posenc_core import (
    apply_rope,
    apply_rope_2d,
    pair_index,
    pairing_permutation,
    pairing_residual,
    rope_decay_bound,
    rope_decay_random,
    rope_linear_attention,
    rope_near_repeats,
    rope_offset_scores,
    rope_relative_gaps,
    rope_scores,
    rope_scores_mixed_pairing,
    rotation_checks,
    toeplitz_deviation,
)

from ...i18n import t
from ...lesson import Check, Explain, PageEntry, Values, View, uses
from ...memo import memo
from ...state import BoolParam, ChoiceParam, IntListParam, IntParam
from . import beyond
from . import figures as figs
from .inputs import inv_freq_for, query_key
from .long_range import (
    check_no_decay,
    check_period,
    check_published,
    check_toy,
    decay_figure,
    periods_figure,
    random_figure,
    repeats_figure,
    toy_figure,
)

BASES = (100.0, 1000.0, 10000.0, 100000.0, 500000.0, 1000000.0, 10000000.0)
PAIRINGS = ("interleaved", "half")
MAX_POSITION = 4096
CLOCK_FRAMES = 48  # the animation advances both positions by 0 … 47
WIDE_CLOCK_COLUMNS = 4  # presenter mode at 1280 × 720: three clocks in one row are twice as wide as in two rows
WINDOW = 40  # query and key positions shown around (m, n)
CURVE_REACH = 128  # offsets drawn either side of 0 (further when n − m is)
SAMPLES = 40  # random (m′, n′) dropped on the offset curve
MISMATCH_REACH = 96  # offsets of the mismatch curve
MIXED_LENGTH = 48  # positions of the mixed-pairing score matrix


@dataclass(frozen=True)
class PairListParam(IntListParam):
    r"""Pair indices 0 … d/2 − 1: the bound follows the ``dim`` widget named by ``hi_from`` (d/2 pairs of d dims)."""

    def upper(self, state: Mapping[str, Any]) -> int:
        if self.hi_from is None or self.hi_from not in state:
            return self.hi
        return max(self.lo, min(self.hi, int(state[self.hi_from]) // 2 - 1))


PARAMS = (
    IntParam("dim", 128, lo=2, hi=512, step=2),
    ChoiceParam("base", 10000.0, options=BASES, widget="select_slider"),
    PairListParam("pairs", (0, 16, 63), lo=0, hi=255, hi_from="dim", max_items=6),
    IntParam("m", 10, lo=0, hi=MAX_POSITION),
    IntParam("n", 3, lo=0, hi=MAX_POSITION),
    IntParam("seed", 0, lo=0, hi=99),
    ChoiceParam("trained", "interleaved", options=PAIRINGS, labels="rope.pairing"),
    IntParam("lookback", 20, lo=1, hi=64),
    BoolParam("same_vector", False),
    IntParam("tolerance", 6, lo=1, hi=30),  # degrees: 6° ≈ 0.1 rad
    *beyond.PARAMS,
)


# --- cached core calls -------------------------------------------------------------------------------------------


def _other(pairing: str) -> str:
    return PAIRINGS[1 - PAIRINGS.index(pairing)]


def _rows(x: np.ndarray, count: int) -> np.ndarray:
    return np.broadcast_to(x, (count, x.shape[0]))  # the same vector at every position


def _score(q: np.ndarray, k: np.ndarray, inv_freq: np.ndarray, m: float, n: float) -> float:
    r""":math:`q_m \cdot k_n`, raw (scale 1)."""
    scores = rope_scores(q[None], k[None], inv_freq, query_positions=[m], key_positions=[n], scale=1.0)  # (1, 1)
    return float(scores[0, 0])


# --- 1. clock hands ----------------------------------------------------------------------------------------------


def _pairs(v: Values) -> tuple[int, ...]:
    r"""The selected pairs that exist for this d (the widget keeps them so; a hand-made URL might not), else pair 0."""
    return tuple(i for i in v["pairs"] if i < v["dim"] // 2) or (0,)


@uses("dim", "base", "pairs", "m", "n", "seed")
def clocks_figure(v: Values, lang: str) -> go.Figure:
    return _clocks(v, lang, figs.CLOCK_COLUMNS)


@uses("dim", "base", "pairs", "m", "n", "seed")
def wide_clocks_figure(v: Values, lang: str) -> go.Figure:
    r"""The clocks on a wide, short canvas (presenter mode, a single-figure embed): up to four a row, not two."""
    return _clocks(v, lang, min(len(_pairs(v)), WIDE_CLOCK_COLUMNS))


def _clocks(v: Values, lang: str, per_row: int) -> go.Figure:
    pairs = _pairs(v)
    inv_freq, (q, k) = inv_freq_for(v["dim"], v["base"]), query_key(v["dim"], v["seed"])
    columns = np.ravel([(2 * i, 2 * i + 1) for i in pairs])  # pair i = (x_{2i}, x_{2i+1}), as in the paper
    shifts = np.arange(CLOCK_FRAMES)
    q_rot = apply_rope(_rows(q, CLOCK_FRAMES), v["m"] + shifts, inv_freq, pairing="interleaved")[:, columns]
    k_rot = apply_rope(_rows(k, CLOCK_FRAMES), v["n"] + shifts, inv_freq, pairing="interleaved")[:, columns]
    shape = (CLOCK_FRAMES, len(pairs), 2)
    return figs.clocks(
        q_rot.reshape(shape),
        k_rot.reshape(shape),
        q[columns].reshape(-1, 2),
        k[columns].reshape(-1, 2),
        pairs,
        inv_freq[list(pairs)],
        v["m"],
        v["n"],
        lang=lang,
        columns=per_row,
    )


# --- 2. q_m · k_n = q_0 · k_{n−m} ----------------------------------------------------------------------------------


def _window(centre: int) -> np.ndarray:
    start = min(max(0, centre - WINDOW // 2), MAX_POSITION + 1 - WINDOW)
    return np.arange(start, start + WINDOW, dtype=np.float64)


@uses("dim", "base", "m", "n", "seed")
def window_figure(v: Values, lang: str) -> go.Figure:
    inv_freq, (q, k) = inv_freq_for(v["dim"], v["base"]), query_key(v["dim"], v["seed"])
    queries, keys = _window(v["m"]), _window(v["n"])
    scores = rope_scores(
        _rows(q, WINDOW), _rows(k, WINDOW), inv_freq, query_positions=queries, key_positions=keys, scale=1.0
    )
    return figs.score_window(scores, queries.astype(int), keys.astype(int), v["m"], v["n"], lang=lang)


@memo
def _relative(dim: int, base: float, m: int, n: int, seed: int) -> dict[str, Any]:
    r"""The curve :math:`q_0 \cdot k_r`, random (m′, n′) scored directly, and the chosen :math:`q_m \cdot k_n`."""
    inv_freq, (q, k) = inv_freq_for(dim, base), query_key(dim, seed)
    reach = max(CURVE_REACH, abs(n - m) + 8)
    offsets = np.arange(-reach, reach + 1, dtype=np.float64)
    curve = rope_offset_scores(q, k, inv_freq, offsets)  # q_0 · k_r
    rng = np.random.default_rng([seed, dim, 1])
    sample_offsets = rng.integers(-reach, reach + 1, SAMPLES)
    sample_m = rng.integers(reach, reach + MAX_POSITION, SAMPLES)  # keys n′ = m′ + r′ stay ≥ 0
    sample_n = sample_m + sample_offsets
    # q_{m′_j} · k_{n′_j}: the diagonal of the score matrix of those positions
    diagonal = np.diagonal(
        rope_scores(
            _rows(q, SAMPLES), _rows(k, SAMPLES), inv_freq, query_positions=sample_m, key_positions=sample_n, scale=1.0
        )
    )
    chosen = _score(q, k, inv_freq, m, n)
    # |q_m·k_n − q_0·k_{n−m}| for the chosen (m, n) and every sampled pair
    gaps = rope_relative_gaps(q, k, inv_freq, query_positions=[m, *sample_m], key_positions=[n, *sample_n])
    gap = float(gaps[0])
    return {
        "offsets": offsets,
        "curve": curve,
        "sample_offsets": sample_offsets,
        "samples": diagonal,
        "chosen": chosen,
        "gap": gap,
        "residual": float(np.max(gaps)),
    }


@uses("dim", "base", "m", "n", "seed")
def offsets_figure(v: Values, lang: str) -> go.Figure:
    r = _relative(v["dim"], v["base"], v["m"], v["n"], v["seed"])
    return figs.offset_curve(
        r["offsets"], r["curve"], r["sample_offsets"], r["samples"], (v["m"], v["n"], r["chosen"]), lang=lang
    )


#: mmmwhy's worked example (「Transformer 中的 position embedding 的设计」): the unit vector (1, 0) turned by 45°.
TURN_DEGREES = 45


@uses()
def check_turn(v: Values) -> Check:
    r"""One pair, θ = π/4, m = 1: :func:`posenc_core.apply_rope` turns (1, 0) to (√2/2, √2/2), length 1."""
    turned = apply_rope(np.array([[1.0, 0.0]]), [1.0], [math.radians(TURN_DEGREES)], pairing="interleaved")[0]
    half_root = math.sqrt(2.0) / 2.0  # cos 45° = sin 45°, written without a cosine
    residual = float(np.max(np.abs(turned - half_root)))
    fmt = {"x": f"{turned[0]:.4f}", "y": f"{turned[1]:.4f}", "norm": f"{np.hypot(*turned):.4f}"}
    return Check("rope.check_turn", residual, tolerance=1e-12, fmt=fmt)


@uses("dim", "base", "m", "n", "seed")
def check_relative(v: Values) -> Check:
    r = _relative(v["dim"], v["base"], v["m"], v["n"], v["seed"])
    fmt = {"m": v["m"], "n": v["n"], "gap": f"{r['gap']:.1e}", "count": SAMPLES}
    return Check("rope.check_relative", r["residual"], fmt=fmt)


# --- 3. half-split and interleaved -------------------------------------------------------------------------------


@uses("dim", "pairs")
def pairs_figure(v: Values, lang: str) -> go.Figure:
    interleaved, half = (pair_index(v["dim"], pairing=p) for p in ("interleaved", "half"))
    return figs.pairing_strip(interleaved, half, _pairs(v), lang=lang)


@uses("dim", "base", "m", "seed")
def check_permutation(v: Values) -> Check:
    x = np.random.default_rng([v["seed"], v["dim"], 2]).standard_normal((8, v["dim"]))
    residual = pairing_residual(x, v["m"] + np.arange(8.0), inv_freq_for(v["dim"], v["base"]))
    return Check("rope.check_permutation", residual, tolerance=1e-12)


@memo
def _mismatch(dim: int, base: float, seed: int, trained: str, lookback: int) -> dict[str, Any]:
    r"""A head trained with pairing ``trained`` to look ``lookback`` tokens back, run with each pairing.

    Its key is :math:`k = R_{L} q` (rotated with the trained pairing), so :math:`q^\top R_{r} k = q^\top R_{r+L} q`
    peaks at r = −L. Returned: the score against r with the right and the wrong pairing, and, over
    :data:`MIXED_LENGTH` positions, the Toeplitz residual with the wrong pairing on both sides and the score matrix
    (and its residual) with q and k rotated by different pairings.
    """
    inv_freq, (q, _) = inv_freq_for(dim, base), query_key(dim, seed)
    other = _other(trained)
    k = apply_rope(q[None], [float(lookback)], inv_freq, pairing=trained)[0]
    offsets = np.arange(-MISMATCH_REACH, MISMATCH_REACH + 1, dtype=np.float64)
    right, wrong = (rope_offset_scores(q, k, inv_freq, offsets, pairing=p) for p in (trained, other))
    q_rows, k_rows = _rows(q, MIXED_LENGTH), _rows(k, MIXED_LENGTH)
    both_wrong = rope_scores(q_rows, k_rows, inv_freq, pairing=other, scale=1.0)
    mixed = rope_scores_mixed_pairing(q_rows, k_rows, inv_freq, query_pairing=other, key_pairing=trained, scale=1.0)
    return {
        "offsets": offsets,
        "right": right,
        "wrong": wrong,
        "at": MISMATCH_REACH - lookback,
        "both_wrong": toeplitz_deviation(both_wrong),
        "mixed": mixed,
        "mixed_residual": toeplitz_deviation(mixed),
    }


@uses("dim", "base", "seed", "trained", "lookback")
def mismatch_figure(v: Values, lang: str) -> go.Figure:
    r = _mismatch(v["dim"], v["base"], v["seed"], v["trained"], v["lookback"])
    return figs.mismatch_curve(
        r["offsets"], r["right"], r["wrong"], v["lookback"], trained=v["trained"], other=_other(v["trained"]), lang=lang
    )


@uses("dim", "base", "seed", "trained", "lookback")
def mixed_figure(v: Values, lang: str) -> go.Figure:
    r = _mismatch(v["dim"], v["base"], v["seed"], v["trained"], v["lookback"])
    title = t(
        "rope.fig_mixed",
        lang,
        query=t(f"rope.pairing.{_other(v['trained'])}", lang),
        key=t(f"rope.pairing.{v['trained']}", lang),
    )
    return figs.score_matrix(r["mixed"], title=title, lang=lang)


def _one_pair(dim: int) -> Check | None:
    r"""With d = 2 there is one pair, (x_0, x_1), in both conventions: nothing can be mixed up."""
    return Check("rope.check_one_pair", 0.0) if dim == 2 else None


@uses("dim", "base", "seed", "trained", "lookback")
def check_wrong(v: Values) -> Check:
    r = _mismatch(v["dim"], v["base"], v["seed"], v["trained"], v["lookback"])
    fmt = {"lookback": v["lookback"], "right": f"{r['right'][r['at']]:.2f}", "wrong": f"{r['wrong'][r['at']]:.2f}"}
    return _one_pair(v["dim"]) or Check("rope.check_wrong", r["both_wrong"], fmt=fmt)


@uses("dim", "base", "seed", "trained", "lookback")
def check_mixed(v: Values) -> Check:
    r = _mismatch(v["dim"], v["base"], v["seed"], v["trained"], v["lookback"])
    return _one_pair(v["dim"]) or Check("rope.check_mixed", r["mixed_residual"], expect_zero=False, tolerance=1e-6)


VIEW = View(
    page_id="rope",
    params=PARAMS,
    wide={"clocks": wide_clocks_figure},
    figures={
        "clocks": clocks_figure,
        "window": window_figure,
        "offsets": offsets_figure,
        "pairs": pairs_figure,
        "mismatch": mismatch_figure,
        "mixed": mixed_figure,
        "decay": decay_figure,
        "random": random_figure,
        "periods": periods_figure,
        "toy": toy_figure,
        "repeats": repeats_figure,
        **beyond.FIGURES,
    },
    sweeps={
        "window": "m",
        "offsets": "m",
        "pairs": "dim",
        "mismatch": "lookback",
        "mixed": "lookback",
        "decay": "base",
        "random": "base",
        "periods": "base",
        "repeats": "tolerance",
        "axial": "grid",
    },
    static={
        "clocks": "already animated: its own plotly.js frames turn the hands, with no server",
        "toy": "reads no parameter (the article's fixed 30° clock)",
    },
    checks={
        "turn": check_turn,
        "relative": check_relative,
        "permutation": check_permutation,
        "wrong": check_wrong,
        "mixed": check_mixed,
        "published": check_published,
        "no_decay": check_no_decay,
        "period": check_period,
        "toy": check_toy,
        **beyond.CHECKS,
    },
    explain=Explain(
        latex=(
            r"\theta_i = \text{base}^{-2i/d}, \qquad i = 0, 1, \dots, d/2 - 1",
            r"\begin{pmatrix} x'_{2i} \\ x'_{2i+1} \end{pmatrix} = \begin{pmatrix} \cos m\theta_i & -\sin m\theta_i \\"
            r"\sin m\theta_i & \cos m\theta_i \end{pmatrix} \begin{pmatrix} x_{2i} \\ x_{2i+1} \end{pmatrix}",
            r"z_i = x_{2i} + \mathrm{i}\,x_{2i+1}, \qquad z'_i = z_i\, e^{\mathrm{i}\, m\theta_i}",
            r"q_m \cdot k_n = \operatorname{Re}\sum_i q_i\,\overline{k_i}\,e^{\mathrm{i}(m-n)\theta_i}"
            r" = q_0 \cdot k_{n-m}",
            r"\Big|\sum_i h_i\, e^{\mathrm{i} r\theta_i}\Big| \le \max_i |h_{i+1}-h_i| \sum_{j=1}^{d/2} |S_j|",
            r"S_j = \sum_{l<j} e^{\mathrm{i} r\theta_l}, \qquad T_i = \frac{2\pi}{\theta_i} = 2\pi\,\text{base}^{2i/d}",
        ),
        sources=(
            apply_rope,
            rope_scores,
            pairing_permutation,
            rope_decay_bound,
            rope_decay_random,
            rope_near_repeats,
            rotation_checks,
            apply_rope_2d,
            rope_linear_attention,
        ),
        paper="Su et al. 2021, *RoFormer: Enhanced Transformer with Rotary Position Embedding*, arXiv:2104.09864, "
        "§3.2–3.4; Hugging Face transformers: `rotate_half`, `convert_llama_weights_to_hf.py`",
    ),
)

PAGE = PageEntry("pages/6_RoPE.py", VIEW, preview="decay")
