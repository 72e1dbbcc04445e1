r"""Length-dependent query temperatures: a factor that multiplies the query at position p and grows with p.

Three forms ship (:data:`TEMPERATURE_FORMS`). The stepped one, :math:`\tau(p) = 1 + \beta\,\ln\!\big(1 + \lfloor (p +
\delta)/L \rfloor\big)`: Llama 4 with β = attn_scale, L = floor_scale, δ = 1, on its NoPE layers only (transformers'
``Llama4TextAttention``); Mistral 3 with β = llama_4_scaling_beta, L = original_max_position_embeddings, δ = 0, on
every layer (``get_llama_4_attn_scale`` in ``modeling_ministral3``). It is 1 below L and grows by β·ln 2, β·ln 3, …
per block of L positions. The smooth log, :math:`\tau(p) = 1 + \beta\ln\max\!\big(1, (p + \delta)/L\big)`: Inkling
with β = log_scaling_alpha, L = log_scaling_n_floor, δ = 1, on its global layers (``InklingAttention``,
``Inkling2FullAttention``). The power, :math:`\tau(p) = \big(1 + (p + \delta)/L\big)^{\beta}`: Beam's NoPE layers,
β = 0.1, L = 2048, δ = 1, fixed in its code (``compute_attention_scaling`` in ``modeling_beam``). All three step or
bend the log-length factor that Nakanishi 2025 ("Scalable-Softmax Is Superior for Attention", arXiv:2501.19399)
argues keeps softmax attention from flattening as the context grows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from ..errors import PosEncError, as_array, as_float, as_int

__all__ = ["TEMPERATURE_FORMS", "QueryTemperature", "layer_temperature", "query_temperature"]


def _stepped(x: np.ndarray, beta: float) -> np.ndarray:
    # τ = 1 + β·ln(1 + ⌊x⌋), x = (p + δ)/L
    return 1.0 + beta * np.log1p(np.floor(x))


def _log(x: np.ndarray, beta: float) -> np.ndarray:
    # τ = 1 + β·ln max(1, x)
    return 1.0 + beta * np.log(np.maximum(x, 1.0))


def _power(x: np.ndarray, beta: float) -> np.ndarray:
    # τ = (1 + x)^β
    return np.exp(beta * np.log1p(x))


#: form → (the factor as a function of x = (p + δ)/L and β, its formula). Source of each: the module docstring.
TEMPERATURE_FORMS = MappingProxyType(
    {
        "stepped": (_stepped, r"1 + \beta\ln\left(1 + \lfloor (p + \delta)/L \rfloor\right)"),
        "log": (_log, r"1 + \beta\ln\max\left(1, (p + \delta)/L\right)"),
        "power": (_power, r"\left(1 + (p + \delta)/L\right)^{\beta}"),
    }
)


@dataclass(frozen=True)
class QueryTemperature:
    r"""A length-dependent query temperature τ(p) of one of the :data:`TEMPERATURE_FORMS` (``form``; "stepped" is
    :math:`1 + \beta\ln(1 + \lfloor (p + \delta)/L \rfloor)`).

    ``source`` names the config key that asks for it ("attn_temperature_tuning": Llama 4, on its NoPE layers;
    "llama_4_scaling_beta": Mistral 3, on every layer; "log_scaling_n_floor": Inkling, on its global layers), or the
    code that applies it where no key does ("compute_attention_scaling": Beam's NoPE layers). ``beta`` is β,
    ``length`` L and ``shift`` δ.
    """

    source: str
    beta: float
    length: float
    shift: int
    form: str = "stepped"

    def at(self, positions: object) -> np.ndarray:
        r""":func:`query_temperature` of this record at ``positions``."""
        return query_temperature(self, positions)


def query_temperature(temperature: QueryTemperature, positions: object) -> np.ndarray:
    r"""The factor τ(p) that multiplies the query at each position p (same shape as ``positions``), in the record's
    form: stepped :math:`1 + \beta\,\ln(1 + \lfloor (p + \delta)/L \rfloor)` (1 below L, then growing by β·ln 2,
    β·ln 3, … per block of L), log :math:`1 + \beta\ln\max(1, (p + \delta)/L)`, or power
    :math:`(1 + (p + \delta)/L)^{\beta}`.

    Source: transformers' ``Llama4TextAttention`` (stepped, δ = 1), ``get_llama_4_attn_scale`` (stepped, δ = 0),
    ``Inkling2FullAttention`` (log, δ = 1) and Beam's ``compute_attention_scaling`` (power, δ = 1), which give the
    forms and the constants; the log-length factor they follow is the one Nakanishi 2025 (arXiv:2501.19399) argues for.
    """
    if not isinstance(temperature, QueryTemperature):
        raise PosEncError(f"temperature must be a QueryTemperature, got {type(temperature).__name__}")
    if temperature.form not in TEMPERATURE_FORMS:
        raise PosEncError(f"temperature.form must be one of {', '.join(TEMPERATURE_FORMS)}, got {temperature.form!r}")
    p = as_array("positions", positions, integer=True, allow_empty=True)
    if p.size and p.min() < 0:
        low = int(p.min())
        raise PosEncError(f"positions must be ≥ 0, got {low}", code="too_small", name="positions", value=low, bound=0)
    factor, _ = TEMPERATURE_FORMS[temperature.form]
    return factor((p + temperature.shift) / temperature.length, temperature.beta)


def layer_temperature(
    config: Mapping[str, object],
    given: Mapping[str, object],
    *,
    rotates: bool,
    sliding: bool = False,
    nope_temperature: QueryTemperature | None = None,
) -> QueryTemperature | None:
    r"""The layer's query temperature: Mistral 3's ``llama_4_scaling_beta`` (every layer), else Llama 4's
    ``attn_temperature_tuning`` (its NoPE layers only, as ``Llama4TextAttention`` applies it), else Inkling's
    ``log_scaling_n_floor`` (its layers without a window, ``sliding`` False), else ``nope_temperature``, the one a
    family's code applies on its NoPE layers (Beam)."""
    beta = given.get("llama_4_scaling_beta")
    if beta is not None:
        original = given.get("original_max_position_embeddings")
        if original is None:
            raise PosEncError(
                "rope_parameters has llama_4_scaling_beta but no original_max_position_embeddings: "
                "the length its query temperature is measured in is not given"
            )
        length = as_int("original_max_position_embeddings", original, lo=1, hi=2**40)
        return QueryTemperature("llama_4_scaling_beta", as_float("llama_4_scaling_beta", beta, ge=0.0), length, 0)
    tuning = config.get("attn_temperature_tuning")
    if tuning is not None and not rotates and _truthy("attn_temperature_tuning", tuning):
        length = as_int("floor_scale", config.get("floor_scale", 8192), lo=1, hi=2**40)  # Llama 4's defaults
        beta = as_float("attn_scale", config.get("attn_scale", 0.1), ge=0.0)
        return QueryTemperature("attn_temperature_tuning", beta, length, 1)
    floor = config.get("log_scaling_n_floor")
    if floor is not None and not sliding:  # InklingAttention: `if not self.is_sliding and … n_floor is not None`
        length = as_int("log_scaling_n_floor", floor, lo=1, hi=2**40)
        beta = as_float("log_scaling_alpha", config.get("log_scaling_alpha", 0.1), ge=0.0)  # Inkling's default
        return QueryTemperature("log_scaling_n_floor", beta, length, 1, "log")
    if nope_temperature is not None and not rotates:
        return nope_temperature
    return None


def _truthy(name: str, value: object) -> bool:
    r"""A config flag: true/false, or a number read as Python reads it (Llama 4 Scout's config has 4)."""
    if isinstance(value, bool):
        return value
    return as_float(name, value) != 0.0
