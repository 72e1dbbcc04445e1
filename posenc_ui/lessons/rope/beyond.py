r"""Page 6, the derivation and beyond one dimension: RoPE's steps measured on the page's numbers, 2-D (axial) RoPE on
an image's patch grid, and RoPE inside linear attention.

Every claim is a :class:`~posenc_ui.lesson.Check` on numbers from :mod:`posenc_core`:
:func:`~posenc_core.rotation_checks`, :func:`~posenc_core.rope_2d_relative_residual` and
:func:`~posenc_core.rope_linear_attention_residual`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import plotly.graph_objects as go

from posenc_core import (
    complex_form_residual,
    patch_grid,
    rope_2d_relative_residual,
    rope_2d_scores,
    rope_inv_freq,
    rope_linear_attention_residual,
    rotation_checks,
    row_vector_gaps,
)

from ...lesson import Check, Values, uses
from ...memo import memo
from ...state import IntParam
from . import figures_beyond as figs
from .inputs import inv_freq_for, query_key

#: Heo et al. 2024 rotate image patches with base 100 and a ViT-B head of 64 dimensions (16 frequencies per axis).
AXIAL_DIM, AXIAL_BASE = 64, 100.0
#: Tokens and head size of the linear-attention comparison: enough that the running totals differ from one total,
#: and small enough that the (L, d, d) running totals stay a few MB whatever the page's d.
LINEAR_TOKENS, LINEAR_DIM = 128, 32

PARAMS = (IntParam("grid", 8, lo=2, hi=24),)


# --- the derivation, measured ------------------------------------------------------------------------------------


@memo
def _derivation(dim: int, base: float, m: int, n: int, seed: int) -> tuple[tuple[float, ...], float]:
    q, k = query_key(dim, seed)
    inv_freq = inv_freq_for(dim, base)
    return tuple(rotation_checks(q, m, n, inv_freq)), complex_form_residual(q, k, m, n, inv_freq)


def _step(name: str, index: int | None = None) -> Callable[[Values], Check]:
    r"""The check of one derivation step: ``index`` into :class:`~posenc_core.RotationChecks`, or the complex form."""

    def check(v: Values) -> Check:
        rotation, complex_gap = _derivation(v["dim"], v["base"], v["m"], v["n"], v["seed"])
        residual = complex_gap if index is None else rotation[index]
        return Check(f"rope.check_{name}", residual, tolerance=1e-9, fmt={"m": v["m"], "n": v["n"], "dim": v["dim"]})

    check.__name__ = f"check_{name}"
    return uses("dim", "base", "m", "n", "seed")(check)


check_complex = _step("complex")
check_orthogonal = _step("orthogonal", 0)
check_determinant = _step("determinant", 1)
check_norm = _step("norm", 2)
check_composition = _step("composition", 3)


@uses("dim", "base", "m", "n")
def check_row_vector(v: Values) -> Check:
    r"""Row vectors: :math:`R_m R_n^\top = R_{m-n}` (the check), and its gap to :math:`R_{n-m}` (the erratum)."""
    right, wrong = row_vector_gaps(v["m"], v["n"], inv_freq_for(v["dim"], v["base"]))
    return Check("rope.check_row_vector", right, fmt={"m": v["m"], "n": v["n"], "wrong": f"{wrong:.2f}"})


# --- 2-D RoPE on a patch grid ------------------------------------------------------------------------------------


@memo
def _axial(grid: int, seed: int) -> tuple[np.ndarray, float]:
    q, k = np.random.default_rng([seed, AXIAL_DIM]).standard_normal((2, AXIAL_DIM))
    inv_freq = rope_inv_freq(AXIAL_DIM // 2, base=AXIAL_BASE)  # (d/4,): one 1-D head of d/2 per axis
    rows, cols = patch_grid(grid, grid)
    same = np.broadcast_to(q, (rows.shape[0], AXIAL_DIM))  # k = q at every patch: the score peaks at the query
    scores = rope_2d_scores(same, same, rows, cols, inv_freq)[(grid // 2) * grid + grid // 2]  # (P,): from the centre
    return scores.reshape(grid, grid), rope_2d_relative_residual(q, k, grid, grid, inv_freq)


@uses("grid", "seed")
def axial_figure(v: Values, lang: str) -> go.Figure:
    scores, _ = _axial(v["grid"], v["seed"])
    return figs.axial_scores(scores, (v["grid"] // 2, v["grid"] // 2), lang=lang)


@uses("grid", "seed")
def check_axial(v: Values) -> Check:
    _, residual = _axial(v["grid"], v["seed"])
    return Check("rope.check_axial", residual, tolerance=1e-9, fmt={"grid": v["grid"]})


# --- linear attention ---------------------------------------------------------------------------------------------


@memo
def _linear_gap(dim: int, base: float, seed: int) -> float:
    q, k, v = np.random.default_rng([seed, dim, 1]).standard_normal((3, LINEAR_TOKENS, dim))
    return rope_linear_attention_residual(q, k, v, inv_freq_for(dim, base))


@uses("dim", "base", "seed")
def check_linear(v: Values) -> Check:
    dim = min(v["dim"], LINEAR_DIM)
    return Check(
        "rope.check_linear",
        _linear_gap(dim, v["base"], v["seed"]),
        tolerance=1e-9,
        fmt={"tokens": LINEAR_TOKENS, "dim": dim},
    )


FIGURES = {"axial": axial_figure}
CHECKS = {
    "complex": check_complex,
    "orthogonal": check_orthogonal,
    "determinant": check_determinant,
    "norm": check_norm,
    "composition": check_composition,
    "row_vector": check_row_vector,
    "axial": check_axial,
    "linear": check_linear,
}
