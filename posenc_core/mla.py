r"""Multi-head latent attention (DeepSeek-V2/V3): why RoPE needs its own small key there.

MLA caches one latent vector :math:`c_n \in \mathbb{R}^{d_c}` per token instead of every head's key and value; a
head's key is its up-projection :math:`k_n = W^{UK} c_n`. Without position in the key, the score

.. math:: q_m^\top k_n = q_m^\top W^{UK} c_n = (W^{UK\top} q_m)^\top c_n

lets :math:`W^{UK}` fold into the query ("absorbed"), so attention runs against the cached latents directly. With
RoPE on that key the score is :math:`(R_m q_m)^\top R_n W^{UK} c_n = q_m^\top R_{n-m} W^{UK} c_n`: the matrix between
query and latent now changes with the distance n − m, and no single matrix folds. DeepSeek therefore keeps the
folded part without position and adds a small rotated key :math:`k^R_n = R_n W^{KR} h_n` (64 dimensions), one for all
heads, cached beside the latent:

.. math:: s_{mn} = q_m^{C\top} W^{UK} c_n + (R_m q^R_m)^\top k^R_n .

Paper: DeepSeek-AI 2024, "DeepSeek-V2: A Strong, Economical, and Efficient Mixture-of-Experts Language Model",
arXiv:2405.04434, §2.1.2 (low-rank key-value compression), §2.1.3 (decoupled RoPE), Table 1 (cache per token).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from .errors import PosEncError, as_float, as_int, check_elements
from .rope.rotation import apply_rope, rope_inv_freq

__all__ = ["MlaCache", "MlaFold", "mla_fold_residuals", "mla_kv_cache"]

#: Score pairs per unknown of the folded matrix that :func:`mla_fold_residuals` asks for, so that a fixed matrix
#: cannot fit random scores by having almost as many entries as there are scores.
_PAIRS_PER_UNKNOWN = 4


class MlaFold(NamedTuple):
    r"""Relative residuals ‖S − Ŝ‖ / ‖S‖ of computing MLA scores from the cache alone, three ways."""

    plain: float  # no RoPE: the best single folded matrix reproduces every score (≈ 1e-15)
    rotated: float  # RoPE on the up-projected key: the best single folded matrix misses by O(1)
    decoupled: float  # DeepSeek's form: folded scores + the small rotated key, against the full computation


def _best_fold_residual(queries: np.ndarray, latents: np.ndarray, scores: np.ndarray) -> float:
    r"""min over every (d_h, d_c) matrix M of ‖S − Q M Cᵀ‖ / ‖S‖ (rows of Q: q_m, rows of C: c_n).

    Least squares over vec(M) with the design q_m ⊗ c_n separates: the best fit is :math:`P_Q S P_C`, S projected on
    the column spaces of Q and C (:math:`P_Q = Q Q^+`), computed in O(L·d²) instead of an (L², d_h·d_c) solve (the
    test solves that one by brute force and agrees).
    """
    fitted = queries @ (np.linalg.pinv(queries) @ scores @ np.linalg.pinv(latents).T) @ latents.T  # P_Q S P_C
    return float(np.linalg.norm(fitted - scores) / np.linalg.norm(scores))


def mla_fold_residuals(
    length: int,
    *,
    latent_dim: int = 8,
    head_dim: int = 8,
    rope_dim: int = 4,
    base: float = 10000.0,
    seed: int = 0,
) -> MlaFold:
    r"""How well scores over L positions are computed from the cached latents through one fixed folded matrix
    :math:`\hat s_{mn} = q_m^\top M c_n` (the best M, by least squares): without RoPE, with RoPE on the up-projected
    key :math:`s_{mn} = (R_m q_m)^\top R_n W^{UK} c_n`, and DeepSeek's decoupled form.

    Random Gaussian :math:`q_m` (d_h), :math:`c_n` (d_c), :math:`W^{UK}` (d_h × d_c), rotary query and key halves of
    ``rope_dim`` dimensions; RoPE is :func:`~posenc_core.apply_rope` (half pairing) at positions 0 … L − 1 with
    :math:`\theta_i = b^{-2i/d}`. ``plain`` is the fold's rounding error (M = W^{UK} is exact); ``rotated`` is what no
    fixed M can remove, because the matrix between query and latent is :math:`R_{n-m} W^{UK}`; ``decoupled`` compares
    the cache-only route — :math:`(W^{UK\top} q^C_m)^\top c_n` plus the rotated small key — with up-projecting every
    key and concatenating [content ‖ rotated] halves.
    Paper: DeepSeek-AI 2024 (DeepSeek-V2), arXiv:2405.04434, §2.1.2–2.1.3.
    """
    length = as_int("length", length, lo=16, hi=64)
    latent_dim = as_int("latent_dim", latent_dim, lo=1, hi=32)
    head_dim = as_int("head_dim", head_dim, lo=2, hi=32, even=True)
    rope_dim = as_int("rope_dim", rope_dim, lo=2, hi=32, even=True)
    base = as_float("base", base, gt=1.0, le=1e6)  # a larger base barely turns any pair over 64 positions
    seed = as_int("seed", seed, lo=0, hi=2**32 - 1)
    if length * length < _PAIRS_PER_UNKNOWN * head_dim * latent_dim:  # fewer pairs: M could fit the noise
        raise PosEncError(
            f"length² = {length * length} score pairs must be at least {_PAIRS_PER_UNKNOWN} per unknown of the folded "
            f"matrix (head_dim · latent_dim = {head_dim * latent_dim}); use a longer length or smaller dimensions"
        )
    check_elements("mla_fold_residuals", (length * length, head_dim * latent_dim))
    rng = np.random.default_rng(seed)
    positions = np.arange(length, dtype=np.float64)
    q = rng.standard_normal((length, head_dim))  # (L, d_h): content queries q^C_m
    c = rng.standard_normal((length, latent_dim))  # (L, d_c): cached latents c_n
    w_uk = rng.standard_normal((head_dim, latent_dim)) / np.sqrt(latent_dim)  # (d_h, d_c)
    q_rope = rng.standard_normal((length, rope_dim))  # (L, d_R): rotary queries q^R_m
    k_rope = rng.standard_normal((length, rope_dim))  # (L, d_R): the shared small key, before rotation
    keys = c @ w_uk.T  # (L, d_h): k_n = W^{UK} c_n
    plain = q @ keys.T  # (L, L): q_mᵀ W^{UK} c_n
    inv_freq = rope_inv_freq(head_dim, base=base)
    # s_mn = (R_m q_m)ᵀ R_n W^{UK} c_n = q_mᵀ R_{n−m} W^{UK} c_n
    rotated = apply_rope(q, positions, inv_freq) @ apply_rope(keys, positions, inv_freq).T
    small = rope_inv_freq(rope_dim, base=base)
    q_r, k_r = apply_rope(q_rope, positions, small), apply_rope(k_rope, positions, small)  # (L, d_R) each
    full = np.concatenate([q, q_r], axis=1) @ np.concatenate([keys, k_r], axis=1).T  # up-projected, concatenated
    # s_mn = (W^{UKᵀ} q^C_m)ᵀ c_n + (R_m q^R_m)ᵀ k^R_n: from the cache alone
    cached = (q @ w_uk) @ c.T + q_r @ k_r.T
    return MlaFold(
        plain=_best_fold_residual(q, c, plain),
        rotated=_best_fold_residual(q, c, rotated),
        decoupled=float(np.linalg.norm(cached - full) / np.linalg.norm(full)),
    )


class MlaCache(NamedTuple):
    r"""Values cached per token per layer: MLA's latent and rotated key against multi-head attention's keys and
    values."""

    latent: int  # d_c = kv_lora_rank
    rope_key: int  # d_h^R = qk_rope_head_dim, one key shared by every head
    mla: int  # d_c + d_h^R
    mha: int  # 2 · n_h · d_h (DeepSeek-V2's Table 1, d_h = the per-head size qk_nope_head_dim)
    mha_same_heads: int  # n_h · (qk_nope_head_dim + qk_rope_head_dim + v_head_dim): the same heads, keys and values

    @property
    def ratio(self) -> float:
        r"""How many times fewer values MLA caches than multi-head attention (Table 1's comparison)."""
        return self.mha / self.mla


_MLA_KEYS = ("kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim", "num_attention_heads")


def mla_kv_cache(config: Mapping[str, object]) -> MlaCache:
    r"""The KV cache per token per layer of an MLA model's ``config.json`` (its values, not bytes):
    :math:`d_c + d^R_h` against multi-head attention's :math:`2 n_h d_h`.

    Reads ``kv_lora_rank`` (d_c), ``qk_rope_head_dim`` (d_h^R), ``qk_nope_head_dim`` (d_h, the per-head size of the
    paper's comparison), ``v_head_dim`` and ``num_attention_heads`` (n_h). A config without them is no MLA model and is
    refused, naming the missing key.
    Paper: DeepSeek-AI 2024 (DeepSeek-V2), arXiv:2405.04434, §2.1.4, Table 1.
    """
    if not isinstance(config, Mapping):
        raise PosEncError(
            f"config must be a JSON object (a dict), got {type(config).__name__}",
            code="config_not_object",
            kind=type(config).__name__,
        )
    values = {}
    for key in _MLA_KEYS:
        if key not in config:
            raise PosEncError(f"config has no {key}: not a multi-head latent attention model (MLA)")
        values[key] = as_int(key, config[key], lo=1, hi=2**20)
    latent, rope, nope = values["kv_lora_rank"], values["qk_rope_head_dim"], values["qk_nope_head_dim"]
    heads, value = values["num_attention_heads"], values["v_head_dim"]
    return MlaCache(
        latent=latent,
        rope_key=rope,
        mla=latent + rope,
        mha=2 * heads * nope,
        mha_same_heads=heads * (nope + rope + value),
    )
