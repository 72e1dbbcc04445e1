r"""One entry per rope_type (:data:`ROPE_REGISTRY`), and :func:`rope_frequencies`, which reads a ``rope_scaling``
dict and calls the entry's compute function. Each compute function is one method (see
:mod:`posenc_core.rope_scaling`); the formulas they share are in :mod:`.formulas`, written once.

Adding a rope_type: write its function ``(dim, base, params, max_position_embeddings, seq_len) -> RopeFrequencies``
here, add its :class:`RopeType` to :data:`ROPE_REGISTRY`, test it, and give it its words
(``extension.method.<name>``) in both languages. :data:`ROPE_TYPES`, the config reader, the extension page's
methods, the lab and the tests read the registry.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import NamedTuple

import numpy as np

from ..errors import PosEncError, as_array, as_bool, as_choice, as_float, as_int
from ..rope import MAX_ROTARY_DIM, rope_inv_freq
from .formulas import (
    MAX_FACTOR,
    dynamic_ntk_alpha,
    implied_factor,
    longrope_attention_factor,
    ntk_base,
    yarn_correction_range,
    yarn_mscale,
    yarn_ramp,
)
from .layouts import axial_inv_freq, proportional_inv_freq

__all__ = ["LAYOUT_KEYS", "ROPE_REGISTRY", "ROPE_TYPES", "RopeFrequencies", "RopeType", "rope_frequencies"]

# Keys a pasted config may carry that describe the base RoPE rather than its scaling; checked against the arguments.
_BASE_KEYS = frozenset({"rope_theta", "partial_rotary_factor"})
#: Keys of any rope_type that say which position axis each pair reads (M-RoPE), not how fast it turns; the
#: frequencies do not depend on them (:func:`posenc_core.mrope_pair_axes` reads them).
LAYOUT_KEYS = frozenset({"mrope_section", "mrope_interleaved"})


class RopeFrequencies(NamedTuple):
    """What every RoPE variant reduces to: the pair speeds and the factor that multiplies cos and sin."""

    inv_freq: np.ndarray  # (rotary_dim / 2,) radians per token
    attention_factor: float


def rope_frequencies(
    head_dim: int,
    *,
    base: float = 10000.0,
    rope_scaling: Mapping[str, object] | None = None,
    max_position_embeddings: int | None = None,
    seq_len: int | None = None,
    partial_rotary_factor: float = 1.0,
) -> RopeFrequencies:
    r"""``(inv_freq, attention_factor)`` for a head of size ``head_dim`` under the scaling ``rope_scaling``.

    Only the first ``int(head_dim · partial_rotary_factor)`` dimensions rotate (GPT-NeoX rotates a quarter).
    ``max_position_embeddings`` is the model's (possibly extended) context; YaRN, Llama 3 and LongRoPE read the
    pre-training length from ``original_max_position_embeddings`` and fall back to it, as transformers does.
    ``seq_len`` is the current length, read by "dynamic" (base grows with it) and "longrope" (long factors above
    the original length).
    """
    head_dim = as_int("head_dim", head_dim, lo=2, hi=MAX_ROTARY_DIM)
    base = as_float("base", base, gt=1.0)
    partial_rotary_factor = as_float("partial_rotary_factor", partial_rotary_factor, gt=0.0, le=1.0)
    if max_position_embeddings is not None:
        max_position_embeddings = as_int("max_position_embeddings", max_position_embeddings, lo=1, hi=2**40)
    if seq_len is not None:
        seq_len = as_int("seq_len", seq_len, lo=1, hi=2**40)
    params = _read_scaling(rope_scaling, base=base, partial_rotary_factor=partial_rotary_factor)
    entry = ROPE_REGISTRY[params.pop("rope_type")]
    if entry.full_head:  # the type decides which pairs turn, over the whole head
        params["partial_rotary_factor"] = partial_rotary_factor
        dim = head_dim
    else:
        dim = int(head_dim * partial_rotary_factor)
    if dim < 2 or dim % 2:
        raise PosEncError(
            f"head_dim · partial_rotary_factor = {head_dim} · {partial_rotary_factor:g} gives {dim} rotary "
            "dimensions; it must be an even number ≥ 2 (transformers would rotate one dimension more than it has "
            "exponents for)"
        )
    return entry.compute(dim, base, params, max_position_embeddings, seq_len)


# --- one function per rope_type: (dim, base, params, max_position_embeddings, seq_len) -> RopeFrequencies -------


def _default(dim, base, params, max_pos, seq_len) -> RopeFrequencies:
    return RopeFrequencies(rope_inv_freq(dim, base=base), 1.0)


def _linear(dim, base, params, max_pos, seq_len) -> RopeFrequencies:
    r"""Position Interpolation: :math:`\theta_i/s`, i.e. position m is read as m/s (Chen et al. 2023, §2.2)."""
    factor = _factor(params)
    return RopeFrequencies(rope_inv_freq(dim, base=base) / factor, 1.0)


def _ntk(dim, base, params, max_pos, seq_len) -> RopeFrequencies:
    r"""NTK-aware: :math:`b' = b\,s^{d/(d-2)}` keeps :math:`\theta_0 = 1` and slows the last pair by exactly 1/s."""
    factor = _factor(params)
    _need_dim4(dim, "ntk")
    return RopeFrequencies(rope_inv_freq(dim, base=ntk_base(base, factor, dim)), 1.0)


def _dynamic(dim, base, params, max_pos, seq_len) -> RopeFrequencies:
    r"""Dynamic NTK: the NTK base recomputed for the current length, :math:`\alpha = s\,\ell/L - (s - 1)`.

    L is ``max_position_embeddings`` (not the "original" length) and ℓ = max(seq_len, L), so nothing changes until
    the sequence outgrows L — transformers' ``_compute_dynamic_ntk_parameters``.
    """
    factor = _factor(params)
    _need_dim4(dim, "dynamic")
    if max_pos is None:
        raise PosEncError("rope_type 'dynamic' needs max_position_embeddings (the length the base starts growing at)")
    alpha = dynamic_ntk_alpha(factor, max_pos if seq_len is None else seq_len, max_pos)
    return RopeFrequencies(rope_inv_freq(dim, base=ntk_base(base, alpha, dim)), 1.0)


def _yarn(dim, base, params, max_pos, seq_len) -> RopeFrequencies:
    r"""YaRN "NTK-by-parts" with its temperature (Peng et al. 2023, §3.2–3.4).

    Pairs that turn many times within the original length (ramp 0) keep :math:`\theta_i`; pairs that turn less
    than once (ramp 1) are interpolated to :math:`\theta_i/s`; a linear ramp in the pair index blends the band
    between. cos and sin are multiplied by :math:`0.1\ln s + 1` (or DeepSeek's mscale ratio).
    """
    original = _original_length(params, max_pos, "yarn")
    factor = _implied(params, max_pos, original)
    beta_fast = _optional_float(params, "beta_fast", gt=0.0) or 32.0  # HF: `or 32`, so 0 means the default too
    beta_slow = _optional_float(params, "beta_slow", gt=0.0) or 1.0
    if beta_fast < beta_slow:
        raise PosEncError(f"beta_fast ({beta_fast:g}) must be ≥ beta_slow ({beta_slow:g}): fast pairs turn more")
    truncate = as_bool("truncate", params.get("truncate", True))
    attention_factor = _optional_float(params, "attention_factor", gt=0.0)
    if attention_factor is None:
        mscale = _optional_float(params, "mscale", ge=0.0)
        mscale_all_dim = _optional_float(params, "mscale_all_dim", ge=0.0)
        if mscale and mscale_all_dim:  # DeepSeek-V2/V3
            attention_factor = yarn_mscale(factor, mscale) / yarn_mscale(factor, mscale_all_dim)
        else:
            attention_factor = yarn_mscale(factor)
    low, high = yarn_correction_range(
        dim,
        base=base,
        original_max_position_embeddings=original,
        beta_fast=beta_fast,
        beta_slow=beta_slow,
        truncate=truncate,
    )
    ramp = yarn_ramp(dim, low, high)  # 0 → keep θ_i, 1 → θ_i / s
    inv_freq = rope_inv_freq(dim, base=base)
    # θ'_i = θ_i/s · ramp_i + θ_i · (1 − ramp_i)
    return RopeFrequencies(inv_freq / factor * ramp + inv_freq * (1.0 - ramp), float(attention_factor))


def _llama3(dim, base, params, max_pos, seq_len) -> RopeFrequencies:
    r"""Llama 3.1: keep short wavelengths, divide long ones by s, blend smoothly in between.

    With :math:`\lambda_i = 2\pi/\theta_i`: :math:`\lambda < L/h` kept, :math:`\lambda > L/l` divided by s, and in
    between :math:`\theta' = (1-\sigma)\,\theta/s + \sigma\,\theta` with :math:`\sigma = (L/\lambda - l)/(h - l)`
    (Meta's ``apply_scaling``; transformers' ``_compute_llama3_parameters``).
    """
    factor = _factor(params)
    original = _original_length(params, max_pos, "llama3")
    low_freq_factor = _required_float(params, "low_freq_factor", "llama3", gt=0.0)
    high_freq_factor = _required_float(params, "high_freq_factor", "llama3", gt=0.0)
    if high_freq_factor < low_freq_factor:
        raise PosEncError(f"high_freq_factor ({high_freq_factor:g}) must be ≥ low_freq_factor ({low_freq_factor:g})")
    inv_freq = rope_inv_freq(dim, base=base)
    wavelen = 2.0 * math.pi / inv_freq
    scaled = np.where(wavelen > original / low_freq_factor, inv_freq / factor, inv_freq)
    if high_freq_factor == low_freq_factor:  # Llama 4 Scout: no blend band, a step at λ = L/l
        return RopeFrequencies(scaled, 1.0)
    smooth = (original / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor)
    blended = (1.0 - smooth) * scaled / factor + smooth * scaled
    medium = (wavelen >= original / high_freq_factor) & (wavelen <= original / low_freq_factor)
    return RopeFrequencies(np.where(medium, blended, scaled), 1.0)


def _longrope(dim, base, params, max_pos, seq_len) -> RopeFrequencies:
    r"""LongRoPE: searched per-pair factors, ``long_factor`` once seq_len exceeds the original length.

    :math:`\theta'_i = 1/(f_i\,b^{2i/d})`; attention_factor :math:`\sqrt{1 + \ln s/\ln L}` with
    s = max_position_embeddings / L unless ``factor`` or ``attention_factor`` is given (Phi-3, transformers).
    """
    original = _original_length(params, max_pos, "longrope")
    short = _factor_list(params, "short_factor", dim)
    long = _factor_list(params, "long_factor", dim)
    factor = _implied(params, max_pos, original)
    if original < 2:
        raise PosEncError(
            f"original_max_position_embeddings must be ≥ 2 for longrope (it divides by ln L), got {original}"
        )
    attention_factor = _optional_float(params, "attention_factor", gt=0.0)
    if attention_factor is None:
        attention_factor = longrope_attention_factor(factor, original_max_position_embeddings=original)
    ext = long if seq_len is not None and seq_len > original else short
    exponent = np.arange(0, dim, 2, dtype=np.float64) / dim
    return RopeFrequencies(1.0 / (ext * base**exponent), float(attention_factor))


def _proportional(dim, base, params, max_pos, seq_len) -> RopeFrequencies:
    r"""p-RoPE over the whole head ``dim`` (``full_head``): :func:`.layouts.proportional_inv_freq`, divided by an
    optional ``factor`` as transformers does."""
    proportion = as_float("partial_rotary_factor", params.get("partial_rotary_factor", 1.0), gt=0.0, le=1.0)
    factor = 1.0 if params.get("factor") is None else _factor(params)
    return RopeFrequencies(proportional_inv_freq(dim, base=base, proportion=proportion) / factor, 1.0)


def _axial(dim, base, params, max_pos, seq_len) -> RopeFrequencies:
    r"""A vision encoder's 2-D RoPE: :func:`.layouts.axial_inv_freq`, one axis' d/4 frequencies."""
    return RopeFrequencies(axial_inv_freq(dim, base=base), 1.0)


@dataclass(frozen=True)
class RopeType:
    r"""One rope_type: everything the core, the pages and the lab need to know about it, in one entry.

    ``keys`` are the ``rope_scaling`` keys it reads (besides "rope_type"); ``compute(dim, base, params,
    max_position_embeddings, seq_len)`` returns its :class:`RopeFrequencies`; ``reads_original`` says whether it reads
    ``original_max_position_embeddings`` (so a config's top-level value is passed on to it); ``defaults`` are the
    values :meth:`scaling` adds (Meta's Llama 3.1 band edges); ``formula`` is False when no factor alone defines it
    (LongRoPE's searched per-pair factors, and the types that are no context extension: proportional, axial);
    ``in_lab`` puts it among the lab's zero-shot extensions. ``full_head``: ``compute`` receives the whole head size and
    reads ``partial_rotary_factor`` from ``params`` itself (proportional RoPE keeps exponents over the full head);
    ``axes``: how many position axes turn with the same ``inv_freq`` (2 for axial RoPE: row and column), so that
    ``2 · axes · len(inv_freq)`` dimensions rotate. ``extends``: it stretches a trained RoPE past its training length
    (page 7 offers it as a method); proportional and axial RoPE choose which pairs or axes turn instead. Like
    transformers' ``ROPE_INIT_FUNCTIONS``, with the rest of what a rope_type implies beside it.
    """

    name: str
    keys: frozenset[str]
    compute: Callable[..., RopeFrequencies]
    reads_original: bool = False
    defaults: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))
    formula: bool = True
    in_lab: bool = False
    full_head: bool = False
    axes: int = 1
    extends: bool = True

    def scaling(self, *, factor: float, original_max_position_embeddings: int, **extra: object) -> dict[str, object]:
        r"""The ``rope_scaling`` dict that applies this type at ``factor`` s to a model trained on
        ``original_max_position_embeddings`` tokens; ``extra`` keys this type reads override its defaults, others are
        ignored (so one set of page sliders serves every type)."""
        if not self.formula:
            raise PosEncError(
                f"rope_type {self.name!r} has no formula from a factor alone (its per-pair factors are searched); "
                "give its full rope_scaling"
            )
        scaling: dict[str, object] = {"rope_type": self.name}
        if "factor" in self.keys:
            scaling["factor"] = float(factor)
        if self.reads_original:
            scaling["original_max_position_embeddings"] = original_max_position_embeddings
        scaling.update(self.defaults)
        scaling.update({key: value for key, value in extra.items() if key in self.keys})
        return scaling


_YARN_KEYS = ("original_max_position_embeddings", "beta_fast", "beta_slow", "mscale", "mscale_all_dim", "truncate")

#: Every rope_type, in the order pages list them. The keys are transformers' validators'.
ROPE_REGISTRY: Mapping[str, RopeType] = MappingProxyType(
    {
        entry.name: entry
        for entry in (
            RopeType("default", frozenset(), _default),
            RopeType("linear", frozenset({"factor"}), _linear, in_lab=True),
            RopeType("ntk", frozenset({"factor"}), _ntk, in_lab=True),
            RopeType("dynamic", frozenset({"factor"}), _dynamic),
            RopeType(
                "yarn", frozenset({"factor", "attention_factor", *_YARN_KEYS}), _yarn, reads_original=True, in_lab=True
            ),
            RopeType(
                "llama3",
                frozenset({"factor", "original_max_position_embeddings", "low_freq_factor", "high_freq_factor"}),
                _llama3,
                reads_original=True,
                defaults=MappingProxyType({"low_freq_factor": 1.0, "high_freq_factor": 4.0}),  # Meta's Llama 3.1
            ),
            RopeType(
                "longrope",
                frozenset(
                    {"factor", "original_max_position_embeddings", "short_factor", "long_factor", "attention_factor"}
                ),
                _longrope,
                reads_original=True,
                formula=False,
            ),
            RopeType(
                "proportional", frozenset({"factor"}), _proportional, formula=False, full_head=True, extends=False
            ),
            RopeType("axial", frozenset(), _axial, formula=False, axes=2, extends=False),
        )
    }
)
ROPE_TYPES = tuple(ROPE_REGISTRY)


# --- reading and checking a rope_scaling dict ------------------------------------------------------------------------


def _read_scaling(
    rope_scaling: Mapping[str, object] | None, *, base: float, partial_rotary_factor: float
) -> dict[str, object]:
    if rope_scaling is None:
        return {"rope_type": "default"}
    if not isinstance(rope_scaling, Mapping):
        raise PosEncError(
            f"rope_scaling must be a dict (a model's rope_scaling / rope_parameters), got {rope_scaling!r:.60}"
        )
    params = dict(rope_scaling)
    for key in params:
        if not isinstance(key, str):
            raise PosEncError(f"rope_scaling keys must be strings, got {key!r:.40}")
    legacy = params.pop("type", None)
    rope_type = params.pop("rope_type", legacy)
    if rope_type is None:
        rope_type = "default"
    if legacy is not None and legacy != rope_type:
        raise PosEncError(f"rope_scaling gives rope_type {rope_type!r:.30} and type {legacy!r:.30}; they must agree")
    rope_type = as_choice("rope_scaling['rope_type']", rope_type, ROPE_TYPES)
    for key, given in (("rope_theta", base), ("partial_rotary_factor", partial_rotary_factor)):
        if key in params:
            value = params.pop(key)
            if not isinstance(value, numbers.Real) or isinstance(value, bool) or float(value) != given:
                raise PosEncError(
                    f"rope_scaling[{key!r}] = {value!r:.30} disagrees with the argument ({given:g}); give it once"
                )
    for key in LAYOUT_KEYS & set(params):
        params.pop(key)
    unknown = sorted(set(params) - ROPE_REGISTRY[rope_type].keys)
    if unknown:
        allowed = ", ".join(sorted(ROPE_REGISTRY[rope_type].keys | {"rope_type"} | _BASE_KEYS)) or "rope_type"
        keys = ", ".join(map(repr, unknown))
        raise PosEncError(
            f"rope_type {rope_type!r} does not use {keys}; it reads: {allowed}",
            code="unknown_keys",
            rope_type=rope_type,
            keys=keys,
            allowed=allowed,
        )
    params["rope_type"] = rope_type
    return params


def _factor(params: Mapping[str, object]) -> float:
    if params.get("factor") is None:
        raise PosEncError("rope_scaling needs 'factor' (the context extension ratio s ≥ 1)")
    return as_float("rope_scaling['factor']", params["factor"], ge=1.0, le=MAX_FACTOR)


def _implied(params: Mapping[str, object], max_pos: int | None, original: int) -> float:
    """``factor`` (checked under its config name), or :func:`implied_factor`'s max_position_embeddings / original."""
    given = None if params.get("factor") is None else _factor(params)
    return implied_factor(given, max_position_embeddings=max_pos, original_max_position_embeddings=original)


def _original_length(params: Mapping[str, object], max_pos: int | None, rope_type: str) -> int:
    value = params.get("original_max_position_embeddings")
    if value is None:
        if max_pos is None:
            raise PosEncError(
                f"rope_type {rope_type!r} needs original_max_position_embeddings (the pre-training length) "
                "or max_position_embeddings"
            )
        return max_pos
    return as_int("rope_scaling['original_max_position_embeddings']", value, lo=1, hi=2**40)


def _optional_float(params: Mapping[str, object], key: str, **bounds: float) -> float | None:
    value = params.get(key)
    return None if value is None else as_float(f"rope_scaling[{key!r}]", value, **bounds)


def _required_float(params: Mapping[str, object], key: str, rope_type: str, **bounds: float) -> float:
    if params.get(key) is None:
        raise PosEncError(
            f"rope_type {rope_type!r} needs {key!r} in rope_scaling", code="missing_key", rope_type=rope_type, key=key
        )
    return as_float(f"rope_scaling[{key!r}]", params[key], **bounds)


def _factor_list(params: Mapping[str, object], key: str, dim: int) -> np.ndarray:
    if params.get(key) is None:
        raise PosEncError(f"rope_type 'longrope' needs {key!r}: one factor per rotary pair ({dim // 2} numbers)")
    values = as_array(f"rope_scaling[{key!r}]", params[key], ndim=1).astype(np.float64)
    if values.shape[0] != dim // 2:
        raise PosEncError(f"rope_scaling[{key!r}] must have {dim // 2} entries (one per pair), got {values.shape[0]}")
    if np.any(values <= 0):
        raise PosEncError(f"rope_scaling[{key!r}] must be positive")
    return values


def _need_dim4(dim: int, rope_type: str) -> None:
    if dim < 4:
        raise PosEncError(
            f"rope_type {rope_type!r} needs at least 4 rotary dimensions (its exponent is d/(d−2)), got {dim}"
        )
