r"""Length-dependent query temperatures: a factor that multiplies the query at position p and grows with p.

Both shipped forms are :math:`\tau(p) = 1 + \beta\,\ln\!\big(1 + \lfloor (p + \delta)/L \rfloor\big)`: Llama 4 with
β = attn_scale, L = floor_scale, δ = 1, on its NoPE layers only (transformers' ``Llama4TextAttention``); Mistral 3 with
β = llama_4_scaling_beta, L = original_max_position_embeddings, δ = 0, on every layer (transformers'
``get_llama_4_attn_scale`` in ``modeling_ministral3``). The factor is 1 below L and grows by β·ln 2, β·ln 3, … per
block of L positions: a stepped form of the log-length factor that Nakanishi 2025 ("Scalable-Softmax Is Superior
for Attention", arXiv:2501.19399) argues keeps softmax attention from flattening as the context grows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..errors import PosEncError, as_array, as_float, as_int

__all__ = ["QueryTemperature", "layer_temperature", "query_temperature"]


@dataclass(frozen=True)
class QueryTemperature:
    r"""A length-dependent query temperature :math:`\tau(p) = 1 + \beta\ln(1 + \lfloor (p + \delta)/L \rfloor)`.

    ``source`` names the config key that asks for it ("attn_temperature_tuning": Llama 4, on its NoPE layers;
    "llama_4_scaling_beta": Mistral 3, on every layer). ``beta`` is β, ``length`` L and ``shift`` δ.
    """

    source: str
    beta: float
    length: float
    shift: int

    def at(self, positions: object) -> np.ndarray:
        r""":func:`query_temperature` of this record at ``positions``."""
        return query_temperature(self, positions)


def query_temperature(temperature: QueryTemperature, positions: object) -> np.ndarray:
    r"""The factor :math:`\tau(p) = 1 + \beta\,\ln(1 + \lfloor (p + \delta)/L \rfloor)` that multiplies the query at
    each position p (same shape as ``positions``): 1 below L, then growing by β·ln 2, β·ln 3, … per block of L.

    Source: transformers' ``Llama4TextAttention`` (δ = 1) and ``get_llama_4_attn_scale`` (δ = 0), which give the
    floor and the constants; the log-length factor it steps is the one Nakanishi 2025 (arXiv:2501.19399) argues for.
    """
    if not isinstance(temperature, QueryTemperature):
        raise PosEncError(f"temperature must be a QueryTemperature, got {type(temperature).__name__}")
    p = as_array("positions", positions, integer=True, allow_empty=True)
    if p.size and p.min() < 0:
        low = int(p.min())
        raise PosEncError(f"positions must be ≥ 0, got {low}", code="too_small", name="positions", value=low, bound=0)
    # τ(p) = 1 + β·ln(1 + ⌊(p + δ)/L⌋)
    return 1.0 + temperature.beta * np.log1p(np.floor((p + temperature.shift) / temperature.length))


def layer_temperature(
    config: Mapping[str, object], given: Mapping[str, object], *, rotates: bool
) -> QueryTemperature | None:
    r"""The layer's query temperature: Mistral 3's ``llama_4_scaling_beta`` (every layer), else Llama 4's
    ``attn_temperature_tuning`` (its NoPE layers only, as ``Llama4TextAttention`` applies it)."""
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
    return None


def _truthy(name: str, value: object) -> bool:
    r"""A config flag: true/false, or a number read as Python reads it (Llama 4 Scout's config has 4)."""
    if isinstance(value, bool):
        return value
    return as_float(name, value) != 0.0
