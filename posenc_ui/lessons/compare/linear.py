r"""Page 13's linear-attention column: what each encoding needs so that linear attention never forms N × N weights.

Linear attention replaces :math:`e^{q_i^\top k_j}` by :math:`\phi(q_i)^\top\phi(k_j)` and sums over keys as running
totals (Katharopoulos et al. 2020, arXiv:2006.16236). :data:`posenc_core.LINEAR_ROUTES` says how each encoding fits:
added codes and RoPE act on one token at a time (features of size d; RoFormer §3.3, eq. 19, rotates the numerator's
features and keeps the denominator unrotated); a Toeplitz bias :math:`b_{j-i}` (Shaw's position term, T5) becomes a
Toeplitz factor :math:`e^{b_{j-i}}`, applied by FFT in O(N log N) (Luo et al. 2021, arXiv:2106.12566); ALiBi's
:math:`e^{-m(i-j)} = e^{-mi}e^{mj}` is summed as decayed running totals, one pass each way when bidirectional
(Press et al. 2021, arXiv:2108.12409). Each fast route is checked live against the dense N × N result
(:func:`posenc_core.bias_route_residual`). The numerical rank of the logits is shown only to say what it does not
decide: it depends on its tolerance, and full rank does not mean the N × N matrix is needed.
"""

from __future__ import annotations

from posenc_core import COMPARED, LINEAR_ROUTES, bias_route_residual, numerical_rank, position_score_matrix
from posenc_core.compare import BIAS_METHODS

from ...i18n import t
from ...lesson import Check, Values, uses
from ...memo import memo

#: The head size of :func:`posenc_core.position_score_matrix` (its default) and a length past it.
HEAD_DIM = 64
RANK_LENGTH = 2 * HEAD_DIM
#: Relative tolerances of :func:`posenc_core.numerical_rank`: its default, and a loose one that shows how much the
#: count depends on it.
STRICT_RTOL, LOOSE_RTOL = 1e-10, 1e-3
#: A fast route agrees with the dense N × N result when the relative gap is rounding (observed ~1e-14).
ROUTE_TOLERANCE = 1e-9


@memo
def ranks(rtol: float = STRICT_RTOL) -> dict[str, int]:
    r"""Encoding → the numerical rank of its (2d, 2d) position-only score matrix at ``rtol``."""
    return {e: numerical_rank(position_score_matrix(e, RANK_LENGTH, dim=HEAD_DIM), rtol=rtol) for e in COMPARED}


@memo
def route_residuals() -> dict[tuple[str, bool, str], float]:
    r"""(encoding, causal, method) → the fast route's relative gap to the dense N × N result, every bias route."""
    return {
        (e, causal, method): bias_route_residual(e, RANK_LENGTH, causal=causal, method=method, dim=HEAD_DIM)
        for e in COMPARED
        if LINEAR_ROUTES[e] in BIAS_METHODS
        for causal in (True, False)
        for method in BIAS_METHODS[LINEAR_ROUTES[e]]
    }


def linear_cell(encoding: str, lang: str) -> str:
    r"""The table cell: what linear attention needs for this encoding (:data:`posenc_core.LINEAR_ROUTES`)."""
    return t(f"compare.linear.{LINEAR_ROUTES[encoding]}", lang, dim=HEAD_DIM)


@uses()
def check_linear(v: Values) -> Check:
    r"""Every bias route (FFT; ALiBi's decayed totals, causal and both ways) gives the dense result up to rounding."""
    residuals = route_residuals()
    fmt = {"length": RANK_LENGTH, "dim": HEAD_DIM, "runs": len(residuals)}
    return Check("compare.check_linear", max(residuals.values()), tolerance=ROUTE_TOLERANCE, fmt=fmt)


@uses()
def check_rank(v: Values) -> Check:
    r"""Rank is no verdict: the per-token encodings' ranks are at most d (features of size d), ALiBi's logits have
    full rank at the strict tolerance yet no more than d at the loose one. The residual is the larger of
    max rank(per-token) / d and rank_loose(ALiBi) / d, so it passes at tolerance 1 exactly when both hold."""
    strict, loose = ranks(STRICT_RTOL), ranks(LOOSE_RTOL)
    per_token = [e for e in COMPARED if LINEAR_ROUTES[e] == "per_token"]
    residual = max(max(strict[e] for e in per_token) / HEAD_DIM, loose["alibi"] / HEAD_DIM)
    fmt = {
        "dim": HEAD_DIM,
        "length": RANK_LENGTH,
        "sinusoidal": strict["sinusoidal"],
        "rope": strict["rope"],
        "learned": strict["learned"],
        "alibi": strict["alibi"],
        "alibi_loose": loose["alibi"],
        "strict": f"{STRICT_RTOL:g}",
        "loose": f"{LOOSE_RTOL:g}",
    }
    return Check("compare.check_rank", residual, tolerance=1.0, fmt=fmt)
