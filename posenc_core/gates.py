r"""Position from the data: positions counted, and attention shared out, by gates computed from q and k.

A fixed encoding says how far apart two tokens are in tokens. Gated schemes let the content decide what counts:

* **CoPE**, contextual position encoding (Golovneva, Wang, Weston & Sukhbaatar 2024, arXiv:2405.18719, §3): query i
  opens a gate :math:`g_{ij} = \sigma(q_i^\top k_j)` on every key j ≤ i, and the position of key j seen from i is the
  number of open gates between them, :math:`p_{ij} = \sum_{k=j}^{i} g_{ik}` — a count of, say, sentences instead of
  tokens. :math:`p_{ij}` is fractional, so the position term interpolates between the integer positions' logits
  :math:`z_i[p] = q_i^\top e[p]` (:func:`cope_positions`, :func:`cope_bias`).
* **Stick-breaking attention** (Tan, Yang, Courville, Panda & Shen 2024, arXiv:2410.17980, §2): no softmax at all.
  Query i walks back from the nearest key; key j takes the share :math:`\beta_{ij} = \sigma(z_{ij})` of what the
  nearer keys left over, :math:`A_{ij} = \beta_{ij}\prod_{j<k<i}(1 - \beta_{ik})`. The rows sum to at most 1 and
  nearer keys are served first: a recency bias with no position in it (:func:`stick_breaking_weights`).

The Forgetting Transformer's gates (one per token, not per pair) are in :mod:`posenc_core.forgetting`.
"""

from __future__ import annotations

import numpy as np

from .errors import PosEncError, as_array, as_bool, as_float, check_elements

__all__ = ["cope_bias", "cope_positions", "stick_breaking_weights"]


def _square_logits(name: str, logits: object) -> np.ndarray:
    x = as_array(name, logits, min_ndim=2)
    if x.shape[-1] != x.shape[-2]:
        raise PosEncError(f"{name} must be (…, L, L): one row per query, one column per key; got shape {x.shape}")
    check_elements(name, x.shape)
    return x.astype(np.float64, copy=False)


def _log_sigmoid(z: np.ndarray) -> np.ndarray:
    return -np.logaddexp(0.0, -z)  # log σ(z), finite for every finite z


def cope_positions(gate_logits: object, *, max_position: float | None = None) -> np.ndarray:
    r"""CoPE's positions :math:`p_{ij} = \sum_{k=j}^{i} \sigma(z_{ik})` for keys j ≤ i, and 0 above the diagonal.

    Paper: Golovneva et al. 2024, arXiv:2405.18719, eqs. (3)–(4); ``gate_logits`` z (…, L, L) are
    :math:`q_i^\top k_j` (the authors' code gates on the logits before the 1/√d scale, with the causal mask making
    later keys' gates 0). With ``max_position`` the positions are clipped to it, as the authors' ``npos_max − 1``.
    Every gate is in (0, 1), so :math:`0 < p_{ij} \le i - j + 1` on and below the diagonal: a count of at most the
    tokens in between, and exactly that count when every gate is 1.
    """
    z = _square_logits("gate_logits", gate_logits)
    length = z.shape[-1]
    below = np.tril(np.ones((length, length), dtype=bool))  # j ≤ i
    gates = np.where(below, np.exp(_log_sigmoid(z)), 0.0)  # g_ik, 0 for k > i
    # p_ij = Σ_{k=j}^{i} g_ik: a cumulative sum from the right, along the keys
    p = np.flip(np.cumsum(np.flip(gates, axis=-1), axis=-1), axis=-1)
    if max_position is not None:
        p = np.minimum(p, as_float("max_position", max_position, gt=0.0, le=1e9))
    return p


def cope_bias(positions: object, position_logits: object) -> np.ndarray:
    r"""The CoPE logit term at fractional positions, :math:`(p - \lfloor p\rfloor)\,z_i[\lceil p\rceil] +
    (1 - p + \lfloor p\rfloor)\,z_i[\lfloor p\rfloor]`, shape of ``positions`` (…, Lq, Lk).

    Paper: Golovneva et al. 2024, arXiv:2405.18719, eq. (5) and §3's computation of :math:`z_i[p] = q_i^\top e[p]`
    once per integer p. ``position_logits`` (…, Lq, P) holds :math:`z_i[0 … P-1]`; every position must lie in
    [0, P − 1] (clip them with :func:`cope_positions`' ``max_position``).
    """
    p = as_array("positions", positions, min_ndim=2)
    z = as_array("position_logits", position_logits, min_ndim=2)
    if z.shape[:-1] != p.shape[:-1]:
        raise PosEncError(
            f"position_logits must be (…, Lq, P) with the rows of positions {p.shape[:-1]}, got shape {z.shape}"
        )
    top = z.shape[-1] - 1
    if p.min() < 0 or p.max() > top:
        raise PosEncError(f"positions must lie in [0, {top}] (P − 1, the last position with a logit)")
    check_elements("cope_bias", p.shape)
    low = np.floor(p)
    high = np.minimum(low + 1, top)
    frac = p - low
    take_low = np.take_along_axis(z, low.astype(np.int64), axis=-1)  # z_i[⌊p⌋]
    take_high = np.take_along_axis(z, high.astype(np.int64), axis=-1)  # z_i[⌈p⌉] (= ⌊p⌋ + 1, or ⌊p⌋ when whole)
    return frac * take_high + (1.0 - frac) * take_low


def stick_breaking_weights(logits: object, *, attend_current: bool = False) -> np.ndarray:
    r"""Stick-breaking attention weights :math:`A_{ij} = \beta_{ij}\prod_{j<k<i}(1 - \beta_{ik})`,
    :math:`\beta_{ij} = \sigma(z_{ij})`, for keys j < i; 0 elsewhere. Shape of ``logits`` (…, L, L).

    Paper: Tan et al. 2024, arXiv:2410.17980, §2, eq. (1). The authors' kernel has a flag ``attend_current`` (default
    False): with it the query's own key joins, j ≤ i and the product runs over j < k ≤ i. Computed in log space as
    the paper's §3 does, :math:`\log A_{ij} = \log\sigma(z_{ij}) - \sum_{j<k<i}\operatorname{softplus}(z_{ik})`.
    Row i sums to :math:`1 - \prod_{k}(1 - \beta_{ik}) < 1`; the first row (no earlier key) is all 0 unless
    ``attend_current``.
    """
    z = _square_logits("logits", logits)
    attend_current = as_bool("attend_current", attend_current)
    length = z.shape[-1]
    allowed = np.tril(np.ones((length, length), dtype=bool), 0 if attend_current else -1)
    log_keep = np.where(allowed, -np.logaddexp(0.0, z), 0.0)  # log(1 − β_ik) = −softplus(z_ik), on allowed keys
    # Σ over k > j of log(1 − β_ik): a cumulative sum from the right, minus the term of j itself
    with np.errstate(over="ignore"):  # a sum past −1e308 is −inf: the stick is used up, the weight is 0
        after = np.flip(np.cumsum(np.flip(log_keep, axis=-1), axis=-1), axis=-1) - log_keep
        after = np.where(np.isnan(after), -np.inf, after)  # −inf − (−inf): a key behind a used-up stick
        return np.where(allowed, np.exp(_log_sigmoid(z) + after), 0.0)
