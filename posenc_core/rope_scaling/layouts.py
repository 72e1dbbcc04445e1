r"""The RoPE layouts of today's models that are no context extension: proportional RoPE (Gemma 4's global layers) and
axial 2-D RoPE (vision encoders), their frequencies from the base and the head size. The registry's ``proportional``
and ``axial`` types call them. M-RoPE, which changes which position a pair reads rather than how fast it turns, is
:mod:`posenc_core.rope.mrope`.
"""

from __future__ import annotations

import numpy as np

from ..errors import PosEncError, as_float, as_int
from ..rope import MAX_ROTARY_DIM, rope_inv_freq

__all__ = ["axial_inv_freq", "proportional_inv_freq"]


def proportional_inv_freq(head_dim: int, *, base: float, proportion: float) -> np.ndarray:
    r"""(d/2,) frequencies of p-RoPE: :math:`\theta_i = b^{-2i/d}` for the first :math:`\lfloor p\,d/2 \rfloor` pairs,
    exponents over the whole head d, and 0 for the other pairs, which carry no position.

    Paper: Barbero et al. 2024, "Round and Round We Go! What makes Rotary Positional Encodings useful?",
    arXiv:2410.06205, §6 (p-RoPE); transformers' ``_compute_proportional_rope_parameters`` (Gemma 4).
    """
    head_dim = as_int("head_dim", head_dim, lo=2, hi=MAX_ROTARY_DIM, even=True)
    base = as_float("base", base, gt=1.0)
    proportion = as_float("partial_rotary_factor", proportion, gt=0.0, le=1.0)
    turning = int(proportion * head_dim // 2)
    inv_freq = np.zeros(head_dim // 2)
    # θ_i = b^{−2i/d} for i < ⌊p·d/2⌋ (exponents over the whole head), 0 for the rest
    inv_freq[:turning] = base ** (-np.arange(0, 2 * turning, 2, dtype=np.float64) / head_dim)
    return inv_freq


def axial_inv_freq(head_dim: int, *, base: float) -> np.ndarray:
    r"""(d/4,) frequencies of axial 2-D RoPE, shared by the row and the column: each axis turns half the head at
    those of a (d/2)-dimensional 1-D RoPE, :math:`\theta_i = b^{-2i/(d/2)}`, i < d/4 (what
    :func:`~posenc_core.apply_rope_2d` takes).

    Paper: Heo et al. 2024, "Rotary Position Embedding for Vision Transformer", arXiv:2403.13298, §3.2 (RoPE-Axial);
    transformers' ``compute_axial_rope_parameters`` (Qwen2-VL, Gemma 4, SAM 3 … vision encoders).
    """
    head_dim = as_int("head_dim", head_dim, lo=4, hi=MAX_ROTARY_DIM)
    if head_dim % 4:
        raise PosEncError(
            f"axial RoPE splits the {head_dim} rotary dimensions into two halves of pairs; {head_dim} is not a "
            "multiple of 4"
        )
    return rope_inv_freq(head_dim // 2, base=base)
