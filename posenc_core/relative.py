r"""Relative positions as learned biases: Shaw et al. (2018) clipping and T5's logarithmic buckets.

Both replace "where is each token" by "how far is the key from the query", :math:`r = j - i` (key minus query, one
sign everywhere in this library), and look up a learned quantity per offset. The score for query i and key j gains
a term that depends on j − i only, so the bias matrix :math:`A_{\text{rel}}(i, j) = R_{j-i}` is Toeplitz: constant
along every diagonal.

* Shaw, Uszkoreit & Vaswani 2018, "Self-Attention with Relative Position Representations", arXiv:1803.02155, §3.2:
  offsets are clipped to [−k, k], so 2k + 1 learned vectors serve any length.
* Raffel et al. 2020, "Exploring the Limits of Transfer Learning" (T5), arXiv:1910.10683, §2.1, and Mesh
  TensorFlow's ``_relative_position_bucket``: one learned scalar per bucket per head; small offsets get a bucket
  each, larger ones share logarithmically wider buckets up to ``max_distance``, beyond which all share the last.
"""

from __future__ import annotations

import math

import numpy as np

from .attention import relative_positions
from .errors import MAX_ELEMENTS, PosEncError, as_array, as_bool, as_int, check_elements

__all__ = ["shaw_relative_bias", "shaw_relative_index", "t5_bucket_matrix", "t5_relative_bucket"]


def shaw_relative_index(query_length: int, key_length: int, *, max_relative: int) -> np.ndarray:
    r"""(Lq, Lk) indices :math:`\mathrm{clip}(j - i, -k, k) + k` into 2k + 1 learned embeddings (int64).

    Paper: Shaw et al. 2018, arXiv:1803.02155, eq. (5)–(6). Queries are the last Lq positions (Lq ≤ Lk).
    """
    k = as_int("max_relative", max_relative, lo=0, hi=MAX_ELEMENTS)
    return np.clip(relative_positions(query_length, key_length), -k, k) + k


def shaw_relative_bias(
    weights: object, query_length: int, key_length: int | None = None, *, max_relative: int
) -> np.ndarray:
    r"""The bias :math:`A_{\text{rel}}(i, j) = w_{\mathrm{clip}(j-i,-k,k)+k}`: (Lq, Lk), or (H, Lq, Lk) for (H, 2k+1).

    Paper: Shaw et al. 2018, §3.2, with one scalar per offset (the form of
    the article 「大语言模型原理基础与前沿：相对位置编码」).
    """
    k = as_int("max_relative", max_relative, lo=0, hi=MAX_ELEMENTS)
    weights = as_array("weights", weights, min_ndim=1)
    if weights.ndim > 2 or weights.shape[-1] != 2 * k + 1:
        raise PosEncError(
            f"weights must have shape (2k+1,) or (heads, 2k+1) = (…, {2 * k + 1}) for max_relative = {k}, "
            f"got {weights.shape}"
        )
    key_length = query_length if key_length is None else key_length
    index = shaw_relative_index(query_length, key_length, max_relative=k)
    check_elements("shaw_relative_bias", (*weights.shape[:-1], *index.shape))
    return weights[..., index]


def t5_relative_bucket(
    relative_position: object,
    *,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
) -> np.ndarray:
    r"""T5's bucket for each ``relative_position`` = key − query (int64, same shape).

    Bidirectional: half the buckets per direction, keys in the future (r > 0) in the upper half. Causal: every
    future key shares bucket 0. Within a half of size h, offsets below h/2 get a bucket each; an offset
    :math:`n \ge h/2` gets :math:`h/2 + \lfloor \ln(2n/h) / \ln(2\,\text{max\_distance}/h) \cdot h/2 \rfloor`, capped
    at h − 1. The logarithm is evaluated in float32, as Mesh TensorFlow and transformers do, so bucket edges agree
    with theirs exactly.
    """
    rel = as_array("relative_position", relative_position, integer=True, allow_empty=True)
    bidirectional = as_bool("bidirectional", bidirectional)
    num_buckets = as_int("num_buckets", num_buckets, lo=4 if bidirectional else 2, hi=2**20)
    if rel.size and np.max(np.abs(rel)) > 2**53:
        raise PosEncError("relative_position must have magnitude ≤ 2^53")
    if bidirectional:
        half = num_buckets // 2
        bucket = np.where(rel > 0, half, 0)
        distance = np.abs(rel)
    else:
        half = num_buckets
        bucket = np.zeros(rel.shape, dtype=np.int64)
        distance = -np.minimum(rel, 0)  # future keys collapse to distance 0
    max_exact = half // 2
    max_distance = as_int("max_distance", max_distance, lo=max_exact + 1, hi=2**53)
    # h/2 + ln(n / max_exact) / ln(max_distance / max_exact) · (h − h/2), in float32, truncated toward zero
    ratio = np.maximum(distance, max_exact).astype(np.float32) / np.float32(max_exact)
    log_part = np.log(ratio) / np.float32(math.log(max_distance / max_exact)) * np.float32(half - max_exact)
    large = np.minimum(max_exact + log_part.astype(np.int64), half - 1)
    return bucket + np.where(distance < max_exact, distance, large)


def t5_bucket_matrix(
    query_length: int,
    key_length: int | None = None,
    *,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
) -> np.ndarray:
    r"""(Lq, Lk) bucket of every (query, key) pair: :func:`t5_relative_bucket` of :math:`j - i`."""
    return t5_relative_bucket(
        relative_positions(query_length, key_length),
        bidirectional=bidirectional,
        num_buckets=num_buckets,
        max_distance=max_distance,
    )
