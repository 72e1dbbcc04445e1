r"""The NumPy core's encodings in torch, for training on a GPU — same names, same conventions, tested equal.

Importing this package imports torch (2–3 s, ~230 MB), so only the extrapolation lab and its CLI do it; the rest
of the app never pays for it. Scalar hyperparameters are validated by the NumPy core's validators, so a bad value
raises the same :class:`~posenc_core.PosEncError` with the same message. Frequencies — every ``rope_type`` — come
from the NumPy core itself (:func:`rope_frequencies`): they are d/2 numbers, computed once, in float64.

Device: :func:`pick_device` takes CUDA, then Apple's MPS, then the CPU, unless told otherwise (argument or the
``POSENC_DEVICE`` environment variable). Angles are formed in float64 wherever the device has it (not on MPS), so a
float32 rotation at position 10^4 is still accurate to float32 rounding.
"""

from __future__ import annotations

import math
import os

import torch

from .. import alibi as _alibi
from .. import rope_scaling as _rope_scaling
from ..errors import PosEncError, as_choice, as_float, as_int, as_query_key_lengths, check_elements
from ..rope import PAIRINGS
from ..sinusoidal import LAYOUTS

__all__ = [
    "alibi_bias",
    "alibi_slopes",
    "apply_rope",
    "attention",
    "pick_device",
    "rope_angles",
    "rope_cos_sin",
    "rope_frequencies",
    "rope_inv_freq",
    "rotate_pairs",
    "shaw_relative_index",
    "sinusoidal",
    "t5_relative_bucket",
]

DEVICES = ("cuda", "mps", "cpu")


def pick_device(prefer: str | None = None) -> torch.device:
    """``prefer`` (or ``$POSENC_DEVICE``) if given and available; else CUDA, then MPS, then the CPU."""
    wanted = prefer or os.environ.get("POSENC_DEVICE") or None
    if wanted is not None:
        wanted = as_choice("device", wanted, DEVICES)
        if not _available(wanted):
            raise PosEncError(f"device {wanted!r} was asked for but is not available here")
        return torch.device(wanted)
    return torch.device(next(name for name in DEVICES if _available(name)))


def _available(name: str) -> bool:
    if name == "cuda":
        return torch.cuda.is_available()
    if name == "mps":
        return bool(getattr(torch.backends, "mps", None)) and torch.backends.mps.is_available()
    return True


def _angle_dtype(device: torch.device) -> torch.dtype:
    return torch.float32 if device.type == "mps" else torch.float64  # MPS has no float64


def rope_inv_freq(dim: int, *, base: float = 10000.0, device: torch.device | str = "cpu") -> torch.Tensor:
    r""":math:`\theta_i = \text{base}^{-2i/d}` as a float64 tensor (float32 on MPS)."""
    return rope_frequencies(dim, base=base, device=device).inv_freq


def rope_frequencies(
    head_dim: int, *, device: torch.device | str = "cpu", **kwargs: object
) -> _rope_scaling.RopeFrequencies:
    r""":func:`posenc_core.rope_frequencies` with ``inv_freq`` as a tensor on ``device`` (same keywords)."""
    freqs = _rope_scaling.rope_frequencies(head_dim, **kwargs)
    device = torch.device(device)
    return _rope_scaling.RopeFrequencies(
        torch.as_tensor(freqs.inv_freq, dtype=_angle_dtype(device), device=device), freqs.attention_factor
    )


def rope_angles(positions: torch.Tensor, inv_freq: torch.Tensor) -> torch.Tensor:
    r"""(L, d/2) angles :math:`m\,\theta_i`, in float64 where the device has it."""
    dtype = _angle_dtype(inv_freq.device)
    return torch.outer(positions.to(dtype), inv_freq.to(dtype))


def apply_rope(
    x: torch.Tensor,
    positions: torch.Tensor,
    inv_freq: torch.Tensor,
    *,
    pairing: str = "half",
    attention_factor: float = 1.0,
) -> torch.Tensor:
    r"""x (…, L, d) with pair i of row m rotated by :math:`m\theta_i`; see :func:`posenc_core.apply_rope`."""
    pairing = as_choice("pairing", pairing, PAIRINGS)
    n = inv_freq.shape[-1]
    if positions.shape[-1] != x.shape[-2] or 2 * n > x.shape[-1]:
        raise PosEncError(f"x {tuple(x.shape)} needs one position per row and ≥ {2 * n} dims for {n} pairs")
    cos, sin = rope_cos_sin(positions, inv_freq, attention_factor=attention_factor, dtype=x.dtype)
    return rotate_pairs(x, cos, sin, pairing=pairing)


def rope_cos_sin(
    positions: torch.Tensor, inv_freq: torch.Tensor, *, attention_factor: float = 1.0, dtype: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""(L, d/2) tables :math:`a\cos m	heta_i` and :math:`a\sin m	heta_i` (a = ``attention_factor``), in ``dtype``.

    The angles are formed in float64 where the device has it, then rounded once: what :func:`apply_rope` rotates by.
    A model that rotates many tensors at the same positions computes these once and calls :func:`rotate_pairs`.
    """
    attention_factor = as_float("attention_factor", attention_factor, gt=0.0)
    angles = rope_angles(positions, inv_freq)
    return (torch.cos(angles) * attention_factor).to(dtype), (torch.sin(angles) * attention_factor).to(dtype)


def rotate_pairs(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, *, pairing: str = "half") -> torch.Tensor:
    r"""x (…, L, d) with each pair :math:`(x_a, x_b)` of row m turned to :math:`(x_a c - x_b s,\ x_a s + x_b c)`.

    ``cos`` and ``sin`` are (L, n) from :func:`rope_cos_sin`; the pairs are (i, i + n) for ``"half"`` and
    (2i, 2i + 1) for ``"interleaved"``; dimensions past 2n pass through (partial rotary).
    """
    n = cos.shape[-1]
    if pairing == "half":
        x1, x2, rest = x[..., :n], x[..., n : 2 * n], x[..., 2 * n :]
        return torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos, rest], dim=-1)
    x1, x2, rest = x[..., 0 : 2 * n : 2], x[..., 1 : 2 * n : 2], x[..., 2 * n :]
    rotated = torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)  # back to interleaved
    return torch.cat([rotated, rest], dim=-1)


def sinusoidal(
    length: int,
    dim: int,
    *,
    base: float = 10000.0,
    layout: str = "interleaved",
    dtype: torch.dtype = torch.float64,
    device: torch.device | str = "cpu",
) -> torch.Tensor:
    r"""The (L, d) table of :func:`posenc_core.sinusoidal` (Vaswani et al. 2017, §3.5)."""
    length = as_int("length", length, lo=1)
    dim = as_int("dim", dim, lo=2, even=True)
    base = as_float("base", base, gt=1.0)
    layout = as_choice("layout", layout, LAYOUTS)
    check_elements("sinusoidal(length, dim)", (length, dim))
    device = torch.device(device)
    wide = _angle_dtype(device)
    omega = torch.exp(-(torch.arange(0, dim, 2, dtype=wide, device=device) / dim) * math.log(base))
    angles = torch.outer(torch.arange(length, dtype=wide, device=device), omega)
    sin, cos = torch.sin(angles), torch.cos(angles)
    table = torch.stack([sin, cos], dim=-1).flatten(-2) if layout == "interleaved" else torch.cat([sin, cos], -1)
    return table.to(dtype)


def alibi_slopes(n_heads: int, *, device: torch.device | str = "cpu") -> torch.Tensor:
    r"""(H,) slopes, exactly :func:`posenc_core.alibi_slopes` (Press et al.'s ``get_slopes``)."""
    device = torch.device(device)
    return torch.as_tensor(_alibi.alibi_slopes(n_heads), dtype=_angle_dtype(device), device=device)


def alibi_bias(
    n_heads: int,
    query_length: int,
    key_length: int | None = None,
    *,
    causal: bool = True,
    device: torch.device | str = "cpu",
) -> torch.Tensor:
    r"""(H, Lq, Lk) bias :math:`-m_h(i - j)`, −inf above the diagonal when causal, :math:`-m_h|i-j|` if not."""
    slopes = alibi_slopes(n_heads, device=device)
    rel = _relative_positions(query_length, key_length, slopes.device).to(slopes.dtype)  # j − i
    distance = torch.where(rel > 0, float("-inf"), rel) if causal else -rel.abs()
    return slopes[:, None, None] * distance


def t5_relative_bucket(
    relative_position: torch.Tensor, *, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> torch.Tensor:
    r"""T5's bucket of key − query, as :func:`posenc_core.t5_relative_bucket` (float32 logarithm, like Mesh TF)."""
    num_buckets = as_int("num_buckets", num_buckets, lo=4 if bidirectional else 2)
    rel = relative_position.to(torch.int64)
    if bidirectional:
        half = num_buckets // 2
        bucket = (rel > 0).to(torch.int64) * half
        distance = rel.abs()
    else:
        half = num_buckets
        bucket = torch.zeros_like(rel)
        distance = -torch.clamp(rel, max=0)
    max_exact = half // 2
    max_distance = as_int("max_distance", max_distance, lo=max_exact + 1)
    ratio = torch.clamp(distance, min=max_exact).to(torch.float32) / max_exact
    log_part = torch.log(ratio) / math.log(max_distance / max_exact) * (half - max_exact)
    large = torch.clamp(max_exact + log_part.to(torch.int64), max=half - 1)
    return bucket + torch.where(distance < max_exact, distance, large)


def shaw_relative_index(
    query_length: int, key_length: int, *, max_relative: int, device: torch.device | str = "cpu"
) -> torch.Tensor:
    r"""(Lq, Lk) indices :math:`\mathrm{clip}(j - i, -k, k) + k`, as :func:`posenc_core.shaw_relative_index`."""
    k = as_int("max_relative", max_relative, lo=0)
    return torch.clamp(_relative_positions(query_length, key_length, torch.device(device)), -k, k) + k


def attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, *, bias: torch.Tensor | None = None, causal: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""``(output, weights)`` of softmax(QKᵀ/√d + B) V, as :func:`posenc_core.attention` (queries right-aligned)."""
    scores = (q / math.sqrt(q.shape[-1])) @ k.transpose(-1, -2)
    if bias is not None:
        scores = scores + bias
    if causal:
        future = _relative_positions(q.shape[-2], k.shape[-2], q.device) > 0
        scores = scores.masked_fill(future, float("-inf"))
    weights = torch.softmax(scores, dim=-1)
    return weights @ v, weights


def _relative_positions(query_length: int, key_length: int | None, device: torch.device) -> torch.Tensor:
    query_length, key_length = as_query_key_lengths(query_length, key_length)
    i = torch.arange(query_length, device=device) + (key_length - query_length)
    j = torch.arange(key_length, device=device)
    return j[None, :] - i[:, None]  # (Lq, Lk), key minus query
