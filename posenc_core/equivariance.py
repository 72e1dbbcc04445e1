r"""Why attention needs position: without it, attention is permutation-equivariant (page 1's demonstration).

Without any bias — and without position added to the inputs — shuffling the tokens shuffles the output rows the same
way and changes nothing else (Vaswani et al. 2017, arXiv:1706.03762, §3.5: "since our model contains no recurrence and
no convolution …"). :func:`self_attention` runs one head over :func:`~posenc_core.token_embeddings` with
:func:`~posenc_core.projection_weights`, position injected by a family of the registry
(:data:`~posenc_core.families.FAMILIES`); :func:`permutation_equivariance_residual` measures the equivariance for each
of :data:`ENCODINGS`.
"""

from __future__ import annotations

import numpy as np

from .attention import attention
from .errors import PosEncError, as_array, as_choice
from .families import DEMO, FAMILIES

__all__ = ["ENCODINGS", "permutation_equivariance_residual", "self_attention"]

#: How :func:`self_attention` can inject position: the families with a ``head`` (page 1's choices).
ENCODINGS = DEMO


def self_attention(
    x: object,
    *,
    w_q: object,
    w_k: object,
    w_v: object,
    encoding: str = "none",
    base: float = 10000.0,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    r"""One attention head over the rows of x (L, d_model), with position injected as ``encoding`` says.

    ``encoding`` is one of :data:`ENCODINGS`, and its family's ``head`` (:data:`~posenc_core.families.FAMILIES`) says
    how: "sinusoidal" and "learned" add a table to x before the projections (Vaswani 2017; BERT); "rope" rotates the
    projected q and k (RoFormer); "alibi" adds the symmetric bias :math:`-\tfrac12|i-j|` (ALiBi's first slope of 8
    heads, the non-causal form); "none" uses the embeddings alone. Returns ``(output (L, d_v), weights (L, L))``.
    """
    x = as_array("x", x, ndim=2)
    encoding = as_choice("encoding", encoding, ENCODINGS)
    d_model = x.shape[1]
    w_q, w_k, w_v = (as_array(name, w, ndim=2) for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v)))
    for name, w in (("w_q", w_q), ("w_k", w_k), ("w_v", w_v)):
        if w.shape[0] != d_model:
            raise PosEncError(f"{name} must have {d_model} rows (the width of x), got shape {w.shape}")
    if w_q.shape[1] != w_k.shape[1]:
        raise PosEncError(f"w_q and w_k must have the same number of columns, got {w_q.shape} and {w_k.shape}")
    q, k, v, bias = FAMILIES[encoding].head(x, w_q, w_k, w_v, base=base, seed=seed)
    return attention(q, k, v, bias=bias)


def permutation_equivariance_residual(
    x: object,
    permutation: object,
    *,
    w_q: object,
    w_k: object,
    w_v: object,
    encoding: str = "none",
    base: float = 10000.0,
    seed: int = 0,
) -> float:
    r""":math:`\max |f(Px) - P f(x)|` for the attention layer f of :func:`self_attention`.

    Zero up to rounding (~1e-16) when ``encoding="none"``: shuffling the tokens only shuffles the outputs, so the
    layer cannot tell "公司收购了竞争对手" from "竞争对手收购了公司". Any real encoding makes it large.
    """
    x = as_array("x", x, ndim=2)
    perm = as_array("permutation", permutation, ndim=1, integer=True)
    if perm.shape[0] != x.shape[0] or not np.array_equal(np.sort(perm), np.arange(x.shape[0])):
        raise PosEncError(f"permutation must be a rearrangement of 0 … {x.shape[0] - 1}")
    weights = {"w_q": w_q, "w_k": w_k, "w_v": w_v, "encoding": encoding, "base": base, "seed": seed}
    out, _ = self_attention(x, **weights)
    out_shuffled, _ = self_attention(x[perm], **weights)
    return float(np.max(np.abs(out_shuffled - out[perm])))
