r"""The cached inputs of page 6 (RoPE), shared by :mod:`.view` and :mod:`.long_range`: θ_i and a seeded q, k.

Every figure of the page starts from the frequencies of the ``dim`` and ``base`` sliders and, where vectors are
scored, from one query and one key drawn from the ``seed`` slider: one copy of each, cached, whichever section asks.
"""

from __future__ import annotations

import numpy as np

from posenc_core import rope_inv_freq

from ...memo import memo


@memo
def inv_freq_for(dim: int, base: float) -> np.ndarray:
    r""":math:`\theta_i = \text{base}^{-2i/d}`, i = 0 … d/2 − 1."""
    return rope_inv_freq(dim, base=base)  # (d/2,)


@memo
def query_key(dim: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    r"""A query and a key, N(0, I) in d dimensions, seeded (a stand-in for W_Q x and W_K x)."""
    q, k = np.random.default_rng([seed, dim]).standard_normal((2, dim))
    return q, k
