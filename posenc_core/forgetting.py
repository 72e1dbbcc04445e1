r"""Forgetting attention: position from the data, as a bias of cumulative log forget gates (Lin, Nikishin, He &
Courville, "Forgetting Transformer: Softmax Attention with a Forget Gate", ICLR 2025, arXiv:2503.02130).

The model adds no position to the input or to q and k. Each head computes, from each token :math:`x_t`, a scalar
forget gate :math:`f_t = \sigma(w^\top x_t + b) \in (0, 1)`, and weights the pair (i, j) by the product of the gates
between them:

.. math::
    o_i = \frac{\sum_{j \le i} F_{ij}\, e^{q_i^\top k_j} v_j}{\sum_{j \le i} F_{ij}\, e^{q_i^\top k_j}}, \qquad
    F_{ij} = \prod_{l=j+1}^{i} f_l,

which is ordinary causal softmax attention with the additive bias :math:`D_{ij} = \log F_{ij} = c_i - c_j`,
:math:`c_i = \sum_{l \le i} \log f_l` (the paper's eqs. 5–6). :math:`D_{ii} = 0` and :math:`D_{ij}` falls as j moves
back, by how much the tokens in between chose to forget. With every gate equal to :math:`e^{-m}` the bias is
:math:`-m(i - j)`: ALiBi's (Press et al. 2021), which makes forgetting attention a data-dependent ALiBi.
"""

from __future__ import annotations

import numpy as np

from .errors import PosEncError, as_array, check_elements

__all__ = ["forget_gate_bias", "log_forget_gates"]


def log_forget_gates(x: np.ndarray, w: np.ndarray, b: np.ndarray | float = 0.0) -> np.ndarray:
    r"""The (…, H, L) log forget gates :math:`\log f_t = \log\sigma(w_h^\top x_t + b_h)` of H heads over tokens x.

    Paper: Lin et al. 2025 (Forgetting Transformer), eq. 5. ``x`` is (…, L, d), ``w`` (d, H) and ``b`` (H,) or a
    scalar. Computed as :math:`-\log(1 + e^{-z})` by ``logaddexp``, which stays finite and ≤ 0 for every finite z.
    """
    x = as_array("x", x, min_ndim=2)
    w = as_array("w", w, ndim=2)
    if w.shape[0] != x.shape[-1]:
        raise PosEncError(f"w must be (d, H) with d = {x.shape[-1]} (x's last axis), got shape {w.shape}")
    bias = as_array("b", b)
    if bias.ndim > 1 or (bias.ndim == 1 and bias.shape[0] != w.shape[1]):
        raise PosEncError(f"b must be a scalar or ({w.shape[1]},), one per head, got shape {bias.shape}")
    check_elements("log_forget_gates", (*x.shape[:-1], w.shape[1]))
    z = x @ w + bias  # (…, L, H)
    return np.swapaxes(-np.logaddexp(0.0, -z), -1, -2)


def forget_gate_bias(log_forget: np.ndarray) -> np.ndarray:
    r"""The (…, L, L) bias :math:`D_{ij} = \sum_{l=j+1}^{i} \log f_l` for j ≤ i, and −inf above the diagonal.

    Paper: Lin et al. 2025 (Forgetting Transformer), eq. 6. ``log_forget`` (…, L) holds :math:`\log f_t \le 0`, one
    row per head or sequence. Built as :math:`c_i - c_j` from the cumulative sum :math:`c`; the diagonal is exactly 0.
    Adding it to the causal logits gives forgetting attention's weights (the −inf entries are the causal mask).
    """
    log_forget = as_array("log_forget", log_forget, min_ndim=1)
    if np.any(log_forget > 0):
        raise PosEncError("log_forget must hold log-gates ≤ 0 (a gate is in (0, 1])")
    length = log_forget.shape[-1]
    check_elements("forget_gate_bias", (*log_forget.shape, length))
    total = np.cumsum(log_forget, axis=-1)
    later = np.triu(np.ones((length, length), dtype=bool), 1)  # j > i: the causal mask
    return np.where(later, -np.inf, total[..., :, None] - total[..., None, :])
