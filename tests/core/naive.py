r"""Naive reference implementations, written straight from each paper or reference code.

These are the first authority of the test suite: plain Python loops over scalars with :mod:`math`, no
vectorisation, no shared helpers with :mod:`posenc_core`, so that a vectorisation, broadcasting, sign or
off-by-one slip in the library cannot be reproduced here by construction. Each function cites what it
transcribes. Arrays are only built at the very end (``np.array(list_of_floats)``) so tests can compare them.

Conventions (docs/references.md): ``relative_position = key − query``; when there are fewer queries than keys the
queries are the *last* ``Lq`` positions, i.e. query row ``r`` sits at absolute position ``Lk − Lq + r``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

# --------------------------------------------------------------------------------------------------
# Sinusoidal (Vaswani et al. 2017, arXiv:1706.03762, §3.5)
# --------------------------------------------------------------------------------------------------


def sinusoidal(length: int, dim: int, base: float = 10000.0, layout: str = "interleaved") -> np.ndarray:
    r"""PE(p, 2i) = sin(p / base^{2i/d}), PE(p, 2i+1) = cos(p / base^{2i/d}) ("interleaved", paper §3.5).

    ``layout="concat"`` puts all the sines first and then all the cosines, [sin ‖ cos], as Marian / RoFormer /
    fairseq / tensor2tensor lay them out (with the paper's exponent denominator d, as docs/references.md asks).
    """
    half = dim // 2
    table = []
    for p in range(length):
        sines = []
        cosines = []
        for i in range(half):
            angle = p / base ** (2 * i / dim)
            sines.append(math.sin(angle))
            cosines.append(math.cos(angle))
        if layout == "interleaved":
            row = []
            for i in range(half):
                row.append(sines[i])
                row.append(cosines[i])
        elif layout == "concat":
            row = sines + cosines
        else:
            raise ValueError(layout)
        table.append(row)
    return np.array(table, dtype=np.float64).reshape(length, dim)


def sinusoidal_inv_freq_power(dim: int, base: float = 10000.0) -> np.ndarray:
    r"""ω_i = base^{−2i/d}, the power form of Vaswani et al. §3.5."""
    return np.array([base ** (-2 * i / dim) for i in range(dim // 2)])


def sinusoidal_inv_freq_exp(dim: int, base: float = 10000.0) -> np.ndarray:
    r"""ω_i = exp(−2i·ln(base)/d), the exp form used by tensor2tensor / the annotated Transformer."""
    return np.array([math.exp(-2 * i * math.log(base) / dim) for i in range(dim // 2)])


def sinusoidal_shift_matrix(offset: float, dim: int, base: float = 10000.0) -> np.ndarray:
    r"""M_k with PE(p + k) = M_k · PE(p) for the interleaved layout, derived from the angle-addition formulas.

    sin((p+k)ω) = sin(pω)·cos(kω) + cos(pω)·sin(kω)   → row 2i   = ( cos kω,  sin kω)
    cos((p+k)ω) = cos(pω)·cos(kω) − sin(pω)·sin(kω)   → row 2i+1 = (−sin kω,  cos kω)
    acting on the (sin pω, cos pω) pair in columns (2i, 2i+1); zero elsewhere.
    """
    m = [[0.0] * dim for _ in range(dim)]
    for i in range(dim // 2):
        w = base ** (-2 * i / dim)
        c = math.cos(offset * w)
        s = math.sin(offset * w)
        m[2 * i][2 * i] = c
        m[2 * i][2 * i + 1] = s
        m[2 * i + 1][2 * i] = -s
        m[2 * i + 1][2 * i + 1] = c
    return np.array(m)


# --------------------------------------------------------------------------------------------------
# Relative positions; Shaw et al. 2018 (arXiv:1803.02155, §3.2)
# --------------------------------------------------------------------------------------------------


def query_position(row: int, query_length: int, key_length: int) -> int:
    """Absolute position of query row ``row`` when the queries are the last ``query_length`` of the keys."""
    return key_length - query_length + row


def relative_positions(query_length: int, key_length: int) -> np.ndarray:
    """j − i (key minus query) for every (query row, key), queries right-aligned to the keys."""
    out = []
    for r in range(query_length):
        i = query_position(r, query_length, key_length)
        out.append([j - i for j in range(key_length)])
    return np.array(out, dtype=np.int64).reshape(query_length, key_length)


def shaw_relative_index(query_length: int, key_length: int, max_relative: int) -> np.ndarray:
    r"""index[i, j] = clip(j − i, −k, k) + k (Shaw et al. 2018, §3.2, eq. (5)–(6)), queries right-aligned."""
    k = max_relative
    out = []
    for r in range(query_length):
        i = query_position(r, query_length, key_length)
        row = []
        for j in range(key_length):
            rel = j - i
            clipped = max(-k, min(k, rel))
            row.append(clipped + k)
        out.append(row)
    return np.array(out, dtype=np.int64).reshape(query_length, key_length)


def shaw_relative_bias(weights: np.ndarray, query_length: int, key_length: int, max_relative: int) -> np.ndarray:
    """weights[..., index[i, j]] for (2k+1,) → (Lq, Lk) and (H, 2k+1) → (H, Lq, Lk), element by element."""
    index = shaw_relative_index(query_length, key_length, max_relative)
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim == 1:
        out = np.zeros((query_length, key_length))
        for r in range(query_length):
            for j in range(key_length):
                out[r, j] = w[int(index[r, j])]
        return out
    heads = w.shape[0]
    out = np.zeros((heads, query_length, key_length))
    for h in range(heads):
        for r in range(query_length):
            for j in range(key_length):
                out[h, r, j] = w[h, int(index[r, j])]
    return out


# --------------------------------------------------------------------------------------------------
# T5 relative buckets (Raffel et al. 2020; Mesh-TF _relative_position_bucket; HF T5Attention)
# --------------------------------------------------------------------------------------------------


def t5_relative_bucket(
    relative_position: int, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> int:
    r"""One bucket, transcribed from HF ``T5Attention._relative_position_bucket`` (itself Mesh-TF's).

    relative_position = memory (key) − query. Bidirectional: half the buckets per sign, keys in the future
    (relative > 0) in the upper half. Unidirectional: n = max(−relative, 0), so every future key lands in 0.
    Exact buckets for n < max_exact = nb/2, then
    max_exact + trunc(log(n / max_exact) / log(max_distance / max_exact) · (nb − max_exact)),
    capped at nb − 1.
    The logarithmic part is computed in float32, as HF does (``relative_position.float()``, ``torch.log``, a
    float32 tensor divided and multiplied by Python scalars), so the truncation lands on the same side at the
    exact-power boundaries (n = 16, 32, 64 for the defaults).
    """
    rel = int(relative_position)
    nb = num_buckets
    bucket = 0
    if bidirectional:
        nb = nb // 2
        if rel > 0:
            bucket += nb
        n = abs(rel)
    else:
        n = -min(rel, 0)
    max_exact = nb // 2
    if n < max_exact:
        return bucket + n
    # float32 throughout, like torch: float32 log of a float32 ratio, divided and multiplied in float32
    ratio = np.float32(n) / np.float32(max_exact)
    log_part = np.log(np.float32(ratio))
    scaled = np.float32(log_part) / np.float32(math.log(max_distance / max_exact))
    scaled = np.float32(scaled) * np.float32(nb - max_exact)
    large = max_exact + int(scaled)  # .to(torch.long) truncates toward zero; scaled ≥ 0 here
    large = min(large, nb - 1)
    return bucket + large


def t5_bucket_matrix(
    query_length: int,
    key_length: int,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
) -> np.ndarray:
    """Buckets of j − i for every (query row, key), queries right-aligned (HF compute_bias, past tokens)."""
    rel = relative_positions(query_length, key_length)
    out = []
    for r in range(query_length):
        out.append(
            [t5_relative_bucket(int(rel[r, j]), bidirectional, num_buckets, max_distance) for j in range(key_length)]
        )
    return np.array(out, dtype=np.int64).reshape(query_length, key_length)


# --------------------------------------------------------------------------------------------------
# RoPE (Su et al. 2021, RoFormer, arXiv:2104.09864, §3.2–3.4)
# --------------------------------------------------------------------------------------------------


def rope_inv_freq(dim: int, base: float = 10000.0) -> list[float]:
    r"""θ_i = base^{−2i/d}, i = 0 … d/2 − 1 (RoFormer eq. (15)); written as ``1 / base ** (2i / d)``."""
    return [1.0 / base ** (2 * i / dim) for i in range(dim // 2)]


def rope_angles(positions: Sequence[float], inv_freq: Sequence[float]) -> np.ndarray:
    """m·θ_i for every position m and pair i."""
    return np.array([[float(p) * float(t) for t in inv_freq] for p in positions]).reshape(len(positions), len(inv_freq))


def _rotate_vector(
    vec: Sequence[float], position: float, inv_freq: Sequence[float], pairing: str, attention_factor: float
) -> list[float]:
    """Rotate one vector: pair i turned by +position·θ_i; cos and sin both multiplied by attention_factor."""
    out = [float(v) for v in vec]
    n = len(inv_freq)
    for i in range(n):
        angle = float(position) * float(inv_freq[i])
        c = math.cos(angle) * attention_factor
        s = math.sin(angle) * attention_factor
        if pairing == "half":  # (x_i, x_{i+n}): HF / GPT-NeoX rotate_half
            a, b = float(vec[i]), float(vec[i + n])
            out[i] = a * c - b * s
            out[i + n] = a * s + b * c
        elif pairing == "interleaved":  # (x_{2i}, x_{2i+1}): RoFormer / GPT-J / Meta
            a, b = float(vec[2 * i]), float(vec[2 * i + 1])
            out[2 * i] = a * c - b * s
            out[2 * i + 1] = a * s + b * c
        else:
            raise ValueError(pairing)
    # dims 2n … d−1 are left as they were: partial rotary passes them through untouched
    return out


def apply_rope(
    x: np.ndarray,
    positions: Sequence[float],
    inv_freq: Sequence[float],
    pairing: str = "half",
    attention_factor: float = 1.0,
) -> np.ndarray:
    r"""x (…, L, d), the row at position m rotated pair by pair (RoFormer eq. (13)–(14)), scalar by scalar."""
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros_like(x)
    length = x.shape[-2]
    for lead in np.ndindex(*x.shape[:-2]):
        for row in range(length):
            out[(*lead, row)] = _rotate_vector(
                list(x[(*lead, row)]), positions[row], inv_freq, pairing, attention_factor
            )
    return out


def rope_rotation_matrix(position: float, inv_freq: Sequence[float]) -> np.ndarray:
    r"""R_m of RoFormer eq. (15): block-diagonal, block i = [[cos mθ_i, −sin mθ_i], [sin mθ_i, cos mθ_i]]."""
    d = 2 * len(inv_freq)
    m = [[0.0] * d for _ in range(d)]
    for i, t in enumerate(inv_freq):
        c = math.cos(position * t)
        s = math.sin(position * t)
        m[2 * i][2 * i] = c
        m[2 * i][2 * i + 1] = -s
        m[2 * i + 1][2 * i] = s
        m[2 * i + 1][2 * i + 1] = c
    return np.array(m)


def rope_wavelengths(inv_freq: Sequence[float]) -> list[float]:
    """λ_i = 2π / θ_i, tokens per full turn."""
    return [2 * math.pi / t for t in inv_freq]


def rope_scores(
    q: np.ndarray,
    k: np.ndarray,
    inv_freq: Sequence[float],
    query_positions: Sequence[float],
    key_positions: Sequence[float],
    pairing: str = "half",
    attention_factor: float = 1.0,
    scale: float | None = None,
) -> np.ndarray:
    r"""s · (R_m q_m)ᵀ (R_n k_n) for 2-D q (Lq, d) and k (Lk, d); s defaults to 1/√d."""
    d = q.shape[-1]
    s = 1.0 / math.sqrt(d) if scale is None else scale
    rq = apply_rope(q, query_positions, inv_freq, pairing, attention_factor)
    rk = apply_rope(k, key_positions, inv_freq, pairing, attention_factor)
    out = np.zeros((q.shape[0], k.shape[0]))
    for a in range(q.shape[0]):
        for b in range(k.shape[0]):
            out[a, b] = s * math.fsum(float(rq[a, t]) * float(rk[b, t]) for t in range(d))
    return out


# --------------------------------------------------------------------------------------------------
# RoPE context extension (docs/references.md "Context extension"; HF modeling_rope_utils.py; papers below)
# --------------------------------------------------------------------------------------------------


def rope_default(dim: int, base: float) -> tuple[list[float], float]:
    """Plain RoPE: (θ_i, 1.0)."""
    return rope_inv_freq(dim, base), 1.0


def rope_linear(dim: int, base: float, factor: float) -> tuple[list[float], float]:
    """Position Interpolation (Chen et al. 2023, arXiv:2306.15595): θ_i / s ≡ positions / s; attention 1."""
    return [t / factor for t in rope_inv_freq(dim, base)], 1.0


def ntk_base(dim: int, base: float, factor: float) -> float:
    """NTK-aware base (bloc97 2023): base' = base · α^{d/(d−2)}."""
    return base * factor ** (dim / (dim - 2))


def rope_ntk(dim: int, base: float, factor: float) -> tuple[list[float], float]:
    """Static NTK-aware scaling: plain RoPE with the base raised to base · α^{d/(d−2)}; attention 1."""
    return rope_inv_freq(dim, ntk_base(dim, base, factor)), 1.0


def rope_dynamic(
    dim: int, base: float, factor: float, max_position_embeddings: int, seq_len: int | None
) -> tuple[list[float], float]:
    r"""Dynamic NTK (emozilla 2023; HF ``_compute_dynamic_ntk_parameters``).

    L = max(seq_len, max_position_embeddings) (seq_len None → max_position_embeddings);
    base' = base · (s·L/max_position_embeddings − (s − 1))^{d/(d−2)}; attention 1.
    """
    length = max_position_embeddings if seq_len is None else max(seq_len, max_position_embeddings)
    new_base = base * (factor * length / max_position_embeddings - (factor - 1)) ** (dim / (dim - 2))
    return rope_inv_freq(dim, new_base), 1.0


def yarn_correction_dim(num_rotations: float, dim: int, base: float, original_max: int) -> float:
    r"""The pair index whose wavelength fits ``num_rotations`` turns into L: d·ln(L/(2π·r)) / (2·ln base)."""
    return dim * math.log(original_max / (num_rotations * 2 * math.pi)) / (2 * math.log(base))


def yarn_low_high(
    dim: int,
    base: float,
    original_max: int,
    beta_fast: float = 32,
    beta_slow: float = 1,
    truncate: bool = True,
) -> tuple[float, float]:
    """(low, high) = (⌊corr(β_fast)⌋, ⌈corr(β_slow)⌉) clamped to [0, d−1]; no rounding unless truncate."""
    low = yarn_correction_dim(beta_fast, dim, base, original_max)
    high = yarn_correction_dim(beta_slow, dim, base, original_max)
    if truncate:
        low = math.floor(low)
        high = math.ceil(high)
    return max(low, 0), min(high, dim - 1)


def yarn_ramp(dim: int, base: float, original_max: int, beta_fast=32, beta_slow=1, truncate=True) -> list[float]:
    """ramp_i = clip((i − low)/(high − low), 0, 1), i = 0 … d/2 − 1 (high += 0.001 when low == high)."""
    low, high = yarn_low_high(dim, base, original_max, beta_fast, beta_slow, truncate)
    if low == high:
        high += 0.001
    return [min(1.0, max(0.0, (i - low) / (high - low))) for i in range(dim // 2)]


def yarn_mscale(scale: float, mscale: float = 1.0) -> float:
    """0.1 · mscale · ln s + 1, or 1 when s ≤ 1 (YaRN §3.4 / jquesnelle/yarn ``get_mscale``)."""
    if scale <= 1:
        return 1.0
    return 0.1 * mscale * math.log(scale) + 1.0


def rope_yarn(
    dim: int,
    base: float,
    factor: float,
    original_max: int,
    beta_fast: float | None = None,
    beta_slow: float | None = None,
    mscale: float | None = None,
    mscale_all_dim: float | None = None,
    attention_factor: float | None = None,
    truncate: bool = True,
) -> tuple[list[float], float]:
    r"""YaRN "NTK-by-parts" (Peng et al. 2023, arXiv:2309.00071, §3.2–3.4; jquesnelle/yarn; HF).

    inv_i = θ_i/s · ramp_i + θ_i · (1 − ramp_i): pairs below ``low`` keep θ_i (extrapolate), pairs
    above ``high`` are interpolated (θ_i/s). attention_factor: the given one, else the
    mscale/mscale_all_dim ratio when both are non-zero, else 0.1·ln s + 1.
    """
    bf = beta_fast or 32
    bs = beta_slow or 1
    ramp = yarn_ramp(dim, base, original_max, bf, bs, truncate)
    inv = []
    for i, t in enumerate(rope_inv_freq(dim, base)):
        inv.append(t / factor * ramp[i] + t * (1 - ramp[i]))
    if attention_factor is None:
        if mscale and mscale_all_dim:
            attention_factor = yarn_mscale(factor, mscale) / yarn_mscale(factor, mscale_all_dim)
        else:
            attention_factor = yarn_mscale(factor)
    return inv, float(attention_factor)


def rope_llama3(
    dim: int,
    base: float,
    factor: float = 8.0,
    low_freq_factor: float = 1.0,
    high_freq_factor: float = 4.0,
    original_max: int = 8192,
) -> tuple[list[float], float]:
    r"""Llama 3.1 (Meta llama-models ``apply_scaling``; HF ``_compute_llama3_parameters``).

    λ_i = 2π/θ_i; λ < L/high: kept; λ > L/low: θ/s; between: smooth = (L/λ − low)/(high − low),
    θ' = (1 − smooth)·θ/s + smooth·θ. attention 1.
    """
    low_wavelen = original_max / low_freq_factor
    high_wavelen = original_max / high_freq_factor
    out = []
    for t in rope_inv_freq(dim, base):
        wavelen = 2 * math.pi / t
        if wavelen < high_wavelen:
            out.append(t)
        elif wavelen > low_wavelen:
            out.append(t / factor)
        else:
            smooth = (original_max / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
            out.append((1 - smooth) * t / factor + smooth * t)
    return out, 1.0


def llama3_regime(dim: int, base: float, low_freq_factor=1.0, high_freq_factor=4.0, original_max=8192) -> list[str]:
    """'kept' / 'blended' / 'divided' for each pair, by the wavelength test above."""
    out = []
    for t in rope_inv_freq(dim, base):
        wavelen = 2 * math.pi / t
        if wavelen < original_max / high_freq_factor:
            out.append("kept")
        elif wavelen > original_max / low_freq_factor:
            out.append("divided")
        else:
            out.append("blended")
    return out


def rope_longrope(
    dim: int,
    base: float,
    short_factor: Sequence[float],
    long_factor: Sequence[float],
    original_max: int,
    factor: float | None = None,
    max_position_embeddings: int | None = None,
    attention_factor: float | None = None,
    seq_len: int | None = None,
) -> tuple[list[float], float]:
    r"""LongRoPE (Ding et al. 2024, arXiv:2402.13753; Phi-3; HF ``_compute_longrope_parameters``).

    ext = long_factor if seq_len > original (strict) else short_factor; θ'_i = 1 / (ext_i · base^{2i/d}).
    attention_factor: the given one, else with s = factor (or max/original): 1 if s ≤ 1, else
    √(1 + ln s / ln L), in both regimes.
    """
    ext = long_factor if (seq_len is not None and seq_len > original_max) else short_factor
    inv = [1.0 / (float(ext[i]) * base ** (2 * i / dim)) for i in range(dim // 2)]
    if attention_factor is None:
        s = factor if factor is not None else max_position_embeddings / original_max
        attention_factor = 1.0 if s <= 1.0 else math.sqrt(1 + math.log(s) / math.log(original_max))
    return inv, float(attention_factor)


def rope_frequencies(
    head_dim: int,
    base: float = 10000.0,
    rope_scaling: dict | None = None,
    max_position_embeddings: int | None = None,
    seq_len: int | None = None,
    partial_rotary_factor: float = 1.0,
) -> tuple[np.ndarray, float]:
    """Dispatch on ``rope_scaling["rope_type"]`` (or legacy ``"type"``) to the transcriptions above."""
    dim = int(head_dim * partial_rotary_factor)
    rs = dict(rope_scaling or {})
    kind = rs.get("rope_type", rs.get("type", "default"))
    if kind == "default":
        inv, att = rope_default(dim, base)
    elif kind == "linear":
        inv, att = rope_linear(dim, base, rs["factor"])
    elif kind == "ntk":
        inv, att = rope_ntk(dim, base, rs["factor"])
    elif kind == "dynamic":
        inv, att = rope_dynamic(dim, base, rs["factor"], max_position_embeddings, seq_len)
    elif kind == "yarn":
        inv, att = rope_yarn(
            dim,
            base,
            rs["factor"],
            rs.get("original_max_position_embeddings", max_position_embeddings),
            beta_fast=rs.get("beta_fast"),
            beta_slow=rs.get("beta_slow"),
            mscale=rs.get("mscale"),
            mscale_all_dim=rs.get("mscale_all_dim"),
            attention_factor=rs.get("attention_factor"),
            truncate=rs.get("truncate", True),
        )
    elif kind == "llama3":
        inv, att = rope_llama3(
            dim,
            base,
            rs["factor"],
            rs["low_freq_factor"],
            rs["high_freq_factor"],
            rs.get("original_max_position_embeddings", max_position_embeddings),
        )
    elif kind == "longrope":
        inv, att = rope_longrope(
            dim,
            base,
            rs["short_factor"],
            rs["long_factor"],
            rs.get("original_max_position_embeddings", max_position_embeddings),
            factor=rs.get("factor"),
            max_position_embeddings=max_position_embeddings,
            attention_factor=rs.get("attention_factor"),
            seq_len=seq_len,
        )
    else:
        raise ValueError(kind)
    return np.array(inv, dtype=np.float64), float(att)


# --------------------------------------------------------------------------------------------------
# ALiBi (Press et al. 2021, arXiv:2108.12409; ofirpress/attention_with_linear_biases)
# --------------------------------------------------------------------------------------------------


def alibi_slopes(n: int) -> list[float]:
    r"""Press et al.'s ``get_slopes``, recursive, transcribed from the authors' fairseq fork.

    For a power of two: start = 2^{−2^{−(log2 n − 3)}} = 2^{−8/n}, slopes start·start^i. Otherwise with c the
    largest power of two ≤ n: get_slopes(c) + get_slopes(2c)[0::2][: n − c].
    """

    def get_slopes_power_of_2(n: int) -> list[float]:
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        ratio = start
        return [start * ratio**i for i in range(n)]

    if math.log2(n).is_integer():
        return get_slopes_power_of_2(n)
    closest_power_of_2 = 2 ** math.floor(math.log2(n))
    return (
        get_slopes_power_of_2(closest_power_of_2) + alibi_slopes(2 * closest_power_of_2)[0::2][: n - closest_power_of_2]
    )


def alibi_bias(
    n_heads: int,
    query_length: int,
    key_length: int,
    causal: bool = True,
    heads: Sequence[int] | None = None,
) -> np.ndarray:
    r"""(H, Lq, Lk): −m_h·(i − j) for j ≤ i, −inf for j > i when causal, −m_h·|i − j| when not (Press §3)."""
    slopes = alibi_slopes(n_heads)
    chosen = list(range(n_heads)) if heads is None else [int(h) for h in heads]
    out = np.zeros((len(chosen), query_length, key_length))
    for a, h in enumerate(chosen):
        m = slopes[h]
        for r in range(query_length):
            i = query_position(r, query_length, key_length)
            for j in range(key_length):
                if j > i:
                    out[a, r, j] = -math.inf if causal else -m * abs(i - j)
                else:
                    out[a, r, j] = -m * (i - j)
    return out


# --------------------------------------------------------------------------------------------------
# Attention (Vaswani et al. 2017, §3.2.1)
# --------------------------------------------------------------------------------------------------


def softmax_row(row: Sequence[float]) -> list[float]:
    """exp(x_j − max x) / Σ_k exp(x_k − max x); −inf entries get weight 0."""
    top = max(row)
    exps = [0.0 if v == -math.inf else math.exp(v - top) for v in row]
    total = math.fsum(exps)
    return [e / total for e in exps]


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """softmax_row along ``axis`` for every other index."""
    x = np.moveaxis(np.asarray(x, dtype=np.float64), axis, -1)
    out = np.zeros_like(x)
    for lead in np.ndindex(*x.shape[:-1]):
        out[lead] = softmax_row([float(v) for v in x[lead]])
    return np.moveaxis(out, -1, axis)


def attention_scores(q: np.ndarray, k: np.ndarray, bias: np.ndarray | None = None, scale: float | None = None):
    """s · q_i·k_j + B_ij for 2-D q (Lq, d), k (Lk, d); s defaults to 1/√d."""
    d = q.shape[-1]
    s = 1.0 / math.sqrt(d) if scale is None else scale
    out = np.zeros((q.shape[0], k.shape[0]))
    for a in range(q.shape[0]):
        for b in range(k.shape[0]):
            out[a, b] = s * math.fsum(float(q[a, t]) * float(k[b, t]) for t in range(d))
            if bias is not None:
                out[a, b] += float(bias[a, b])
    return out


def attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, bias: np.ndarray | None = None, causal: bool = False):
    """(softmax(QKᵀ/√d + B, future keys −inf if causal) V, weights) for 2-D q, k, v; queries right-aligned."""
    lq, lk = q.shape[0], k.shape[0]
    scores = attention_scores(q, k, bias)
    if causal:
        for r in range(lq):
            i = query_position(r, lq, lk)
            for j in range(lk):
                if j > i:
                    scores[r, j] = -math.inf
    weights = np.zeros((lq, lk))
    for r in range(lq):
        weights[r] = softmax_row([float(s) for s in scores[r]])
    out = np.zeros((lq, v.shape[1]))
    for r in range(lq):
        for c in range(v.shape[1]):
            out[r, c] = math.fsum(float(weights[r, j]) * float(v[j, c]) for j in range(lk))
    return out, weights


# --------------------------------------------------------------------------------------------------
# RoPE long-range decay (RoFormer §3.4.3)
# --------------------------------------------------------------------------------------------------


def rope_decay_bound(distances: Sequence[float], inv_freq: Sequence[float]) -> np.ndarray:
    r"""(1/n) Σ_{j=1..n} |S_j|, S_j = Σ_{k=0}^{j−1} e^{i·r·θ_k}, n = d/2 (RoFormer §3.4.3, Abel summation)."""
    n = len(inv_freq)
    out = []
    for r in distances:
        partial = complex(0.0, 0.0)
        total = 0.0
        for k in range(n):
            partial += complex(math.cos(r * inv_freq[k]), math.sin(r * inv_freq[k]))  # S_{k+1}
            total += abs(partial)
        out.append(total / n)
    return np.array(out)


def rope_decay_all_ones(distances: Sequence[float], inv_freq: Sequence[float]) -> np.ndarray:
    r"""Σ_i cos(r·θ_i): half the RoPE score (R_m q)ᵀ(R_n k) of all-ones q and k at distance r = n − m."""
    return np.array([math.fsum(math.cos(r * t) for t in inv_freq) for r in distances])


# --------------------------------------------------------------------------------------------------
# RoPE layouts of today's models: p-RoPE, axial 2-D RoPE, M-RoPE's position ids
# --------------------------------------------------------------------------------------------------


def rope_proportional(head_dim: int, base: float, proportion: float, factor: float = 1.0) -> list[float]:
    r"""p-RoPE (Barbero et al. 2024, arXiv:2410.06205, §6): keep the fastest fraction p of the pairs of a RoPE head,
    set the others' frequency to 0 — θ_i = base^(−2i/d) for i < ⌊p·d/2⌋ (d the whole head), else 0; every frequency
    divided by ``factor`` (transformers' Gemma 4 reading)."""
    kept = int(proportion * head_dim // 2)
    out = []
    for i in range(head_dim // 2):
        theta = 1.0 / base ** (2 * i / head_dim) if i < kept else 0.0
        out.append(theta / factor)
    return out


def rope_axial(head_dim: int, base: float) -> list[float]:
    r"""RoPE-Axial (Heo et al. 2024, arXiv:2403.13298, §3.2): each axis rotates half the head, d/4 pairs, at the
    frequencies of a d/2-dimensional 1-D RoPE, θ_i = base^(−2i/(d/2)) = base^(−4i/d)."""
    half = head_dim // 2
    return [1.0 / base ** (2 * i / half) for i in range(half // 2)]


def mrope_position_ids(segments, spatial_merge_size: int = 1) -> list[list[int]]:
    r"""Qwen2-VL's M-RoPE ids (Wang et al. 2024, arXiv:2409.12191, §2.1), one token at a time: text t = h = w = the
    running position; a vision block's patches (frame, row, col) get start + frame, start + row, start + col, and
    the next segment starts at start + max(rows, cols) (transformers 5.23.0's get_rope_index)."""
    t_ids, h_ids, w_ids = [], [], []
    start = 0
    for kind, size in segments:
        if kind == "text":
            for _ in range(size):
                t_ids.append(start)
                h_ids.append(start)
                w_ids.append(start)
                start += 1
            continue
        frames, rows, cols = (1, *size) if kind == "image" else size
        rows //= spatial_merge_size
        cols //= spatial_merge_size
        for frame in range(frames):
            for row in range(rows):
                for col in range(cols):
                    t_ids.append(start + frame)
                    h_ids.append(start + row)
                    w_ids.append(start + col)
        start += max(rows, cols)
    return [t_ids, h_ids, w_ids]
