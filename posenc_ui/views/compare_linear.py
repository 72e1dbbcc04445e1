r"""Page 10's linear-attention column: which encodings factorise into per-token features, measured by rank.

Linear attention needs each score as :math:`\phi_m^\top \psi_n`, features of one token at a time, summed as running
totals (RoFormer §3.3 for RoPE). The rank of an encoding's position-only score matrix
(:func:`posenc_core.position_score_matrix`, d = 64) at L = 2d tells which: per-token encodings (added sinusoids or table
rows, RoPE's rotation) give rank ≤ d, while a pairwise bias (Shaw, T5, ALiBi) gives full rank L and needs the N × N
matrix.
"""

from __future__ import annotations

from posenc_core import COMPARED, numerical_rank, position_score_matrix

from ..i18n import t
from ..memo import memo
from .base import Check, Values, uses

#: The head size of :func:`posenc_core.position_score_matrix` (its default) and a length past it.
HEAD_DIM = 64
RANK_LENGTH = 2 * HEAD_DIM
PER_TOKEN, PAIRWISE = ("sinusoidal", "learned", "rope"), ("shaw", "t5", "alibi")


@memo
def ranks() -> dict[str, int]:
    r"""Encoding → the numerical rank of its (2d, 2d) position-only score matrix."""
    return {e: numerical_rank(position_score_matrix(e, RANK_LENGTH, dim=HEAD_DIM)) for e in COMPARED}


def linear_cell(encoding: str, lang: str) -> str:
    r"""The table cell: ✓ with the rank when it is at most d (running totals work), ✗ with it otherwise."""
    rank = ranks()[encoding]
    key = "compare.linear_yes" if rank <= HEAD_DIM else "compare.linear_no"
    return t(key, lang, rank=rank, dim=HEAD_DIM, length=RANK_LENGTH)


@uses()
def check_linear(v: Values) -> Check:
    r"""Per-token encodings have rank ≤ d and pairwise biases rank > d: the residual is the larger of
    max rank(per-token) / d and (d + 1) / min rank(pairwise), so it passes at tolerance 1 exactly when both hold."""
    r = ranks()
    per_token, pairwise = max(r[e] for e in PER_TOKEN), min(r[e] for e in PAIRWISE)
    residual = max(per_token / HEAD_DIM, (HEAD_DIM + 1) / pairwise)
    fmt = {"per_token": per_token, "pairwise": pairwise, "dim": HEAD_DIM, "length": RANK_LENGTH}
    return Check("compare.check_linear", residual, tolerance=1.0, fmt=fmt)
