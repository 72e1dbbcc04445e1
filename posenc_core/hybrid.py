r"""Hybrid RoPE / NoPE stacks: RoPE on three of every four layers, no position on the fourth.

Llama 4 (iRoPE), SmolLM3 and Cohere's Command A interleave layers that rotate q and k with layers that add no
position at all. In transformers' Llama 4 and SmolLM3 configs (``no_rope_layer_interval = 4``) layer i (from 0)
rotates unless :math:`(i + 1) \bmod 4 = 0`: layers 3, 7, 11 … carry no position. In those models the NoPE layers are
the global ones (full attention) and the RoPE layers are local (Llama 4's chunks, Command A's sliding window); Yang et
al. 2025 ("Rope to Nope and Back Again", arXiv:2501.18795) argue for the split: RoPE for what is near, a layer free of
any rotation to look up what is far by content.

A stack of fewer than four layers has no fourth layer, and the rule above would rotate every layer: no hybrid at all.
:func:`hybrid_rope_layers` keeps the shape of one group of four instead, whatever its depth: position first, then a
last layer without it, so a 2-layer stack (the lab's) rotates in layer 1 and not in layer 2. From four layers on it
is exactly the models' rule (``tests/core/test_hybrid_p_rope.py`` holds it to transformers' ``SmolLM3Config``).
"""

from __future__ import annotations

import numpy as np

from .errors import PosEncError, as_array, as_int
from .rope import rope_scores

__all__ = ["HYBRID_INTERVAL", "hybrid_rope_layers", "hybrid_scores"]

#: One layer in four without position: Llama 4's and SmolLM3's ``no_rope_layer_interval``.
HYBRID_INTERVAL = 4


def hybrid_rope_layers(n_layers: int, *, interval: int = HYBRID_INTERVAL) -> np.ndarray:
    r"""(n_layers,) bool: True where layer i rotates q and k, False where it carries no position:
    :math:`(i + 1) \bmod \text{interval} \ne 0`, and the last layer without position when n_layers < interval.

    Paper: Yang et al. 2025, arXiv:2501.18795 (RoPE–NoPE hybrid); transformers' ``Llama4TextConfig`` and
    ``SmolLM3Config`` (``no_rope_layers[i] = int((i + 1) % no_rope_layer_interval != 0)``). A stack shorter than one
    interval would rotate everywhere under that rule; it keeps the group's shape instead (position first, a last
    layer without it), since a hybrid with no NoPE layer is plain RoPE.
    """
    n_layers = as_int("n_layers", n_layers, lo=2, hi=1024)
    interval = as_int("interval", interval, lo=2, hi=1024)
    rotates = (np.arange(n_layers) + 1) % interval != 0
    if n_layers < interval:
        rotates[-1] = False
    return rotates


def hybrid_scores(q: object, k: object, inv_freq: object, *, n_layers: int, interval: int = HYBRID_INTERVAL):
    r"""(n_layers, …, L, L) logits of the same q, k (…, L, d) in every layer of a hybrid stack: RoPE's
    :math:`(R_iq_i)^\top R_jk_j/\sqrt d` in a rotating layer, the plain :math:`q_i^\top k_j/\sqrt d` in a NoPE layer.

    Paper: Su et al. 2021 (RoPE, eq. 16) on the layers :func:`hybrid_rope_layers` rotates; Kazemnejad et al. 2023
    (NoPE, arXiv:2305.19466) on the others. Only the layer pattern is the hybrid's: a real model's layers have their
    own q and k, which this takes equal to show what position does in each.
    """
    q = as_array("q", q, min_ndim=2)
    k = as_array("k", k, min_ndim=2)
    if q.shape != k.shape:
        raise PosEncError(f"q and k must have the same shape (…, L, d), got {q.shape} and {k.shape}")
    rotated = rope_scores(q, k, inv_freq)
    plain = np.matmul(q, np.swapaxes(k, -1, -2)) / np.sqrt(q.shape[-1])
    return np.stack([rotated if turn else plain for turn in hybrid_rope_layers(n_layers, interval=interval)])
