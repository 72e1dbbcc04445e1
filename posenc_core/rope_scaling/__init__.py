r"""RoPE context extension: PI, NTK-aware, dynamic NTK, YaRN, Llama 3 and LongRoPE behind one signature.

A model trained on sequences of length L has seen each pair's angle :math:`m\theta_i` only for m < L. Running it on
s·L tokens shows the fast pairs nothing new (they turned many times in training) but pushes the slow pairs to angles
they never saw. Every method here changes the frequencies :math:`\theta_i` — and some the logit temperature — so
that the longer context stays in familiar territory. :func:`rope_frequencies` returns ``(inv_freq, attention_factor)``
exactly as Hugging Face ``transformers`` (``modeling_rope_utils.ROPE_INIT_FUNCTIONS``) computes them, with the same
config keys, so a model's ``rope_scaling`` / ``rope_parameters`` dict pastes straight in. (transformers works in
float32; these are the same formulas in float64.)

============ ============================================================== =======================================
rope_type    inv_freq                                                       source
============ ============================================================== =======================================
default      :math:`\theta_i = b^{-2i/d}`                                   Su et al. 2021, arXiv:2104.09864
linear       :math:`\theta_i / s` (≡ positions / s)                         Chen et al. 2023 (PI), arXiv:2306.15595
ntk          base :math:`b' = b\,s^{d/(d-2)}`                               bloc97 2023 (NTK-aware); not an HF type
dynamic      :math:`b' = b\,(s\,\ell/L - (s-1))^{d/(d-2)}`, ℓ = max(seq, L) emozilla 2023; HF "dynamic"
yarn         ramp between :math:`\theta_i/s` and :math:`\theta_i`, mscale   Peng et al. 2023, arXiv:2309.00071
llama3       three wavelength bands, smooth blend                           Meta 2024, Llama 3.1 (arXiv:2407.21783)
longrope     per-pair factors :math:`\theta_i / f_i` (short / long)         Ding et al. 2024, arXiv:2402.13753
proportional first ⌊p·d/2⌋ pairs :math:`b^{-2i/d}`, rest 0                  Barbero et al. 2024, arXiv:2410.06205
axial        one axis' :math:`b^{-2i/(d/2)}`, i < d/4 (row, column)         Heo et al. 2024, arXiv:2403.13298
============ ============================================================== =======================================

The last two are no context extension: they are how Gemma 4's global layers and the vision encoders rotate, read from
a config like the others (``formula`` False: nothing to build from a factor s).

A small package, as transformers' ``modeling_rope_utils`` is one module:

* :mod:`.registry` — one :class:`RopeType` entry per rope_type (:data:`ROPE_REGISTRY`: keys, compute function, whether
  it reads ``original_max_position_embeddings``, how to build its ``rope_scaling`` from a factor and a training
  length) and :func:`rope_frequencies`;
* :mod:`.formulas` — the closed forms the types, pages and checks share, each written once (NTK base, dynamic α,
  YaRN's temperature and ramp, LongRoPE's attention factor, the implied factor);
* :mod:`.pairs` — what a method does to each pair: regimes, turns, angles, implied base, temperatures;
* :mod:`.beta_base`, :mod:`.entropy`, :mod:`.rerope` — the reasons behind the methods (Su's posts on kexue.fm): RoPE as
  a base-β number system and each method's divisor per pair, attention entropy against length and the logit factors
  that hold it, ReRoPE's clipped relative positions;
* :mod:`.layouts` — proportional and axial RoPE, the two registry types that are no context extension;
* :mod:`.config` — a model's ``config.json`` (a dict; :mod:`.config_text` parses pasted text) → its frequencies, its
  training length and its (rope_type, s), under every family's field names;
* :mod:`.families` — what some families decide in code rather than in their config (keyed by ``model_type``), and
  what posenc refuses about a family;
* :mod:`.temperature` — the length-dependent query temperatures (Llama 4, Mistral 3);
* :mod:`.layers` — the same config read as a whole model: one record per decoder layer (rotates or not, which RoPE,
  which window, which query temperature); :mod:`.layer_kinds` — the registries of what a layer is (attention,
  recurrent, …) and how it sees position (RoPE, NoPE, learned, ALiBi, T5's bias, …), and the families that say it
  under names of their own; :mod:`.reach` — what each kind of layer sees: its view and wavelengths.
"""

from .beta_base import frequency_divisors, ntk_divisors
from .config import (
    MAX_CONFIG_CHARS,
    MAX_CONFIG_DEPTH,
    SCALED_TYPES,
    ConfigScaling,
    config_scaling,
    config_training_length,
    parse_config_text,
    rope_frequencies_from_config,
)
from .entropy import (
    EntropyCurves,
    LengthTemperatures,
    attention_entropy,
    entropy_by_length,
    length_temperatures,
    log_length_scale,
    mean_entropy,
    ssmax_scale,
)
from .formulas import (
    MAX_FACTOR,
    dynamic_ntk_alpha,
    implied_factor,
    longrope_attention_factor,
    ntk_base,
    ntk_exponent,
    yarn_correction_range,
    yarn_dynamic_scale,
    yarn_mscale,
    yarn_ramp,
)
from .layer_kinds import BLOCK_KINDS, POSITION_KINDS, BlockKind, PositionKind
from .layers import MAX_LAYERS, LayerPosition, distinct_layer_types, model_layers
from .pairs import (
    REGIMES,
    TemperatureCurves,
    YarnRegimes,
    angle_coverage,
    implied_base,
    pair_regimes,
    regime_counts,
    rotations_in_context,
    temperature_curves,
    unseen_angles,
    unseen_pair_count,
    yarn_ramp_by_turns,
    yarn_regimes,
)
from .reach import LayerReach, layer_reach
from .registry import ROPE_REGISTRY, ROPE_TYPES, RopeFrequencies, RopeType, rope_frequencies
from .rerope import rerope_relative_positions, rerope_scores
from .temperature import TEMPERATURE_FORMS, QueryTemperature, query_temperature

__all__ = [
    "BLOCK_KINDS",
    "MAX_CONFIG_CHARS",
    "MAX_CONFIG_DEPTH",
    "MAX_FACTOR",
    "MAX_LAYERS",
    "POSITION_KINDS",
    "REGIMES",
    "ROPE_REGISTRY",
    "ROPE_TYPES",
    "SCALED_TYPES",
    "TEMPERATURE_FORMS",
    "BlockKind",
    "ConfigScaling",
    "EntropyCurves",
    "LayerPosition",
    "LayerReach",
    "LengthTemperatures",
    "PositionKind",
    "QueryTemperature",
    "RopeFrequencies",
    "RopeType",
    "TemperatureCurves",
    "YarnRegimes",
    "angle_coverage",
    "attention_entropy",
    "config_scaling",
    "config_training_length",
    "distinct_layer_types",
    "dynamic_ntk_alpha",
    "entropy_by_length",
    "frequency_divisors",
    "implied_base",
    "implied_factor",
    "layer_reach",
    "length_temperatures",
    "log_length_scale",
    "longrope_attention_factor",
    "mean_entropy",
    "model_layers",
    "ntk_base",
    "ntk_divisors",
    "ntk_exponent",
    "pair_regimes",
    "parse_config_text",
    "query_temperature",
    "regime_counts",
    "rerope_relative_positions",
    "rerope_scores",
    "rope_frequencies",
    "rope_frequencies_from_config",
    "rotations_in_context",
    "ssmax_scale",
    "temperature_curves",
    "unseen_angles",
    "unseen_pair_count",
    "yarn_correction_range",
    "yarn_dynamic_scale",
    "yarn_mscale",
    "yarn_ramp",
    "yarn_ramp_by_turns",
    "yarn_regimes",
]
