r"""Why extended contexts need a temperature: attention's entropy grows with the number of keys.

Softmax over n keys spreads its weight as n grows: for logits of a fixed spread the entropy
:math:`H = -\sum_j p_j \ln p_j` (:func:`attention_entropy`) rises roughly like ln n, so a head trained on L tokens
attends more diffusely at s·L. Interpolation makes this worse (more tokens share the same angles). Two remedies
multiply the logits by a factor κ > 1:

* Su Jianlin, 「从熵不变性看Attention的Scale操作」 (科学空间 kexue.fm, 2021): :math:`\kappa = \log_L n = \ln n/\ln L`
  (:func:`log_length_scale`), chosen so the entropy stays roughly what it was at the training length L;
* YaRN (Peng et al. 2023, arXiv:2309.00071, §3.4): :math:`\kappa = 1/t = (0.1\ln s + 1)^2` — a fit to LLaMA's
  perplexity, not a derivation (the paper says so).

:func:`entropy_by_length` measures all three on one toy head: logits :math:`\sigma z_j` with :math:`z_j` standard
normal, the same draw for every n so the curves differ only by n and κ.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ..errors import PosEncError, as_array, as_float, as_int, check_elements
from .formulas import MAX_FACTOR, yarn_mscale
from .temperature import QueryTemperature, query_temperature

__all__ = [
    "EntropyCurves",
    "LengthTemperatures",
    "attention_entropy",
    "entropy_by_length",
    "length_temperatures",
    "log_length_scale",
    "mean_entropy",
    "ssmax_scale",
]

_MAX_KEYS = 2**20  # the toy head's longest context: enough for s = 64 at L = 16 384
_MAX_QUERIES = 256


def attention_entropy(logits: object) -> np.ndarray:
    r"""The entropy of softmax over the last axis, in nats: :math:`H = \ln Z - \sum_j p_j x_j` with
    :math:`Z = \sum_j e^{x_j - \max x}` (x shifted by its max), shape ``logits.shape[:-1]``.

    Equal to :math:`-\sum_j p_j \ln p_j`, written so that no :math:`\ln 0` occurs. Uniform logits over n keys give
    ln n, the largest possible value; one dominant logit gives ≈ 0.
    Paper: Su 2021, 「从熵不变性看Attention的Scale操作」.
    """
    x = as_array("logits", logits, min_ndim=1).astype(np.float64, copy=False)
    with np.errstate(over="ignore"):  # a gap past float64's range (1e308 − (−1e308)) is −inf: that key's weight is 0
        shifted = x - np.max(x, axis=-1, keepdims=True)  # ≤ 0: no overflow in exp
    weights = np.exp(shifted)
    total = np.sum(weights, axis=-1, keepdims=True)  # ≥ 1: the max contributes e⁰
    p = weights / total
    # p·x → 0 as p → 0 (x bounded by the shift's range): a key of weight 0 adds nothing, not 0·(−inf) = nan
    terms = np.multiply(p, shifted, out=np.zeros_like(p), where=p > 0)
    return np.log(total[..., 0]) - np.sum(terms, axis=-1)


def log_length_scale(lengths: object, *, training_length: int) -> np.ndarray:
    r"""Su's entropy-invariant logit factor :math:`\kappa(n) = \log_L n = \ln n / \ln L` (1 at n = L).

    Paper: Su 2021, 「从熵不变性看Attention的Scale操作」 (kexue.fm/archives/8823): scale :math:`q\cdot k` by
    :math:`\log_L n/\sqrt d` instead of :math:`1/\sqrt d`.
    """
    n = as_array("lengths", lengths, ndim=1)
    if np.any(n < 1):
        raise PosEncError("lengths must be ≥ 1 (keys attended to)")
    length = as_int("training_length", training_length, lo=2, hi=2**40)
    return np.log(n) / math.log(length)


class EntropyCurves(NamedTuple):
    r"""Mean attention entropy (nats) at each context length n: plain, with YaRN's factor, with Su's log-n factor."""

    plain: np.ndarray  # κ = 1
    yarn: np.ndarray  # κ = (0.1 ln s + 1)², s = max(1, n/L)
    log_n: np.ndarray  # κ = ln n / ln L


def _yarn_logit_factor(lengths: np.ndarray, training_length: int) -> np.ndarray:
    r""":math:`\mu(s)^2 = (0.1\ln s + 1)^2` with :math:`s = \max(1, n/L)`: cos and sin each carry μ, q·k its square."""
    factors = np.clip(lengths / training_length, 1.0, MAX_FACTOR)
    return np.array([yarn_mscale(float(s)) ** 2 for s in factors])


def mean_entropy(lengths: object, factors: object, *, std: float = 3.0, queries: int = 32, seed: int = 0) -> np.ndarray:
    r"""Mean over queries of the entropy of softmax(κ_n·σz) over the first n keys, one value per n in ``lengths``
    with its factor κ_n in ``factors`` (the same shape).

    ``queries`` rows of standard-normal :math:`z_j`, drawn once for the longest n (so every n sees a prefix of the
    same keys); σ = ``std``. The toy head of Su 2021, 「从熵不变性看Attention的Scale操作」: logits of a fixed spread,
    no position, so the curves differ only by n and κ.
    """
    n = as_array("lengths", lengths, ndim=1, integer=True)
    if n.min() < 1 or n.max() > _MAX_KEYS:
        raise PosEncError(f"lengths must lie in [1, {_MAX_KEYS:,}]")
    kappa = as_array("factors", factors, ndim=1)
    if kappa.shape != n.shape or np.any(kappa < 0) or np.any(kappa > 1e3):
        raise PosEncError(f"factors must be one value in [0, 1000] per length, {n.shape[0]} of them")
    std = as_float("std", std, gt=0.0, le=100.0)
    queries = as_int("queries", queries, lo=1, hi=_MAX_QUERIES)
    seed = as_int("seed", seed, lo=0, hi=2**32 - 1)
    check_elements("mean_entropy keys", (queries, int(n.max())))
    z = std * np.random.default_rng(seed).standard_normal((queries, int(n.max())))  # (queries, max n)
    return np.array([attention_entropy(k * z[:, :m]).mean() for k, m in zip(kappa, n, strict=True)])


def entropy_by_length(
    lengths: object, *, training_length: int, std: float = 3.0, queries: int = 32, seed: int = 0
) -> EntropyCurves:
    r"""Mean entropy of softmax(κ·σz) over the first n keys, for each n in ``lengths``, with κ = 1, YaRN's and Su's.

    ``queries`` rows of standard-normal :math:`z_j`, drawn once for the longest n (so every n sees a prefix of the same
    keys); σ = ``std``. The default σ = 3 gives a peaked head, about 3 nats (≈ 20 keys' worth) at n = 512.
    Paper: Su 2021, 「从熵不变性看Attention的Scale操作」; Peng et al. 2023, arXiv:2309.00071, §3.4.
    """
    n = as_array("lengths", lengths, ndim=1, integer=True)
    if n.min() < 1 or n.max() > _MAX_KEYS:
        raise PosEncError(f"lengths must lie in [1, {_MAX_KEYS:,}]")
    length = as_int("training_length", training_length, lo=2, hi=_MAX_KEYS)
    scales = {
        "plain": np.ones(n.shape[0]),
        "yarn": _yarn_logit_factor(n.astype(np.float64), length),
        "log_n": log_length_scale(n, training_length=length),
    }
    return EntropyCurves(
        **{name: mean_entropy(n, kappa, std=std, queries=queries, seed=seed) for name, kappa in scales.items()}
    )


def ssmax_scale(lengths: object, *, s: float) -> np.ndarray:
    r"""Scalable-Softmax's logit factor :math:`s\ln n` over n keys: :math:`\mathrm{SSMax}(z)_j = n^{s z_j}/\sum_k
    n^{s z_k} = \operatorname{softmax}(s\ln n\cdot z)_j`.

    Paper: Nakanishi 2025, "Scalable-Softmax Is Superior for Attention", arXiv:2501.19399, §3 (s is a learned scalar
    per layer and head). With :math:`s = 1/\ln L` it is Su's :math:`\log_L n` exactly (:func:`log_length_scale`).
    """
    n = as_array("lengths", lengths, ndim=1)
    if np.any(n < 1):
        raise PosEncError("lengths must be ≥ 1 (keys attended to)")
    s = as_float("s", s, ge=0.0, le=100.0)
    return s * np.log(n)


class LengthTemperatures(NamedTuple):
    r"""What each scheme multiplies the logits by when the query sees n keys (it sits at position n − 1)."""

    llama4: np.ndarray  # τ(n − 1) = 1 + β ln(1 + ⌊(n − 1 + δ)/L_f⌋): the query is scaled, the logits by τ
    yarn: np.ndarray  # μ(s)² with s = max(1, n/L): cos and sin carry μ each
    log_n: np.ndarray  # ln n / ln L
    ssmax: np.ndarray  # s ln n


def length_temperatures(
    lengths: object, *, training_length: int, temperature: QueryTemperature, ssmax_s: float
) -> LengthTemperatures:
    r"""The logit multipliers of Llama 4's query temperature, YaRN's, Su's log n and SSMax against the number of keys.

    Papers: transformers' ``Llama4TextAttention`` (:func:`query_temperature` at p = n − 1); Peng et al. 2023,
    arXiv:2309.00071, eq. (22), with the factor s = n/L a reader would set for n tokens; Su 2021 (kexue.fm/archives/
    8823); Nakanishi 2025, arXiv:2501.19399. L = ``training_length``.
    """
    n = as_array("lengths", lengths, ndim=1, integer=True)
    if n.min() < 1 or n.max() > 2**40:
        raise PosEncError("lengths must lie in [1, 2^40]")
    return LengthTemperatures(
        llama4=query_temperature(temperature, n - 1),
        yarn=_yarn_logit_factor(n.astype(np.float64), as_int("training_length", training_length, lo=2, hi=2**40)),
        log_n=log_length_scale(n, training_length=training_length),
        ssmax=ssmax_scale(n, s=ssmax_s),
    )
