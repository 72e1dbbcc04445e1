r"""posenc_core — every positional encoding a Transformer uses, as small pure NumPy functions.

Absolute (added to the input):   :mod:`.positions`, :mod:`.sinusoidal`, :mod:`.learned`
Relative (biases on the logits): :mod:`.relative` (Shaw et al., T5), :mod:`.alibi`, :mod:`.bias_analysis`
Rotary (applied to q and k):     :mod:`.rope`, :mod:`.rope_analysis`,
                                 :mod:`.rope_scaling` (PI, NTK, dynamic NTK, YaRN, Llama 3, LongRoPE),
                                 :mod:`.model_config` (a model's ``config.json`` → its frequencies),
                                 :mod:`.extension_analysis` (per-pair regimes, angle coverage, temperatures)
Attention and the curves the app draws: :mod:`.attention`, :mod:`.analysis`, :mod:`.compare_analysis`
The extrapolation lab's task, without torch: :mod:`.lab_task`

Conventions everywhere: float64, keyword-only hyperparameters named as in the papers and in Hugging Face configs,
``relative_position = key_position − query_position``, and one error type, :class:`PosEncError` (a ``ValueError``),
whose message names the argument, its value and what is allowed. Nothing here imports streamlit, plotly or torch;
the torch mirror lives in ``posenc_core.torch_backend`` and is imported only on request.
"""

from .alibi import alibi_bias, alibi_slopes
from .analysis import (
    ENCODINGS,
    neighbour_distances,
    permutation_equivariance_residual,
    projection_weights,
    rope_decay_all_ones,
    rope_decay_bound,
    rope_decay_random,
    rope_first_near_repeat,
    rotations_in_context,
    self_attention,
    sinusoidal_similarity,
    token_embeddings,
    yarn_regimes,
)
from .attention import attention, attention_scores, causal_mask, relative_positions, softmax
from .bias_analysis import (
    alibi_closest_power_of_two,
    alibi_key_only_bias,
    alibi_receptive_field,
    alibi_slope_exponents,
    attention_weights,
    diagonal_spread,
    position_cross_scores,
    random_logits,
    t5_max_exact,
    toeplitz_deviation,
)
from .compare_analysis import (
    COMPARED,
    ExtrapolationExcess,
    extrapolation_excess,
    position_score_matrix,
    toeplitz_residual,
)
from .errors import MAX_ELEMENTS, PosEncError
from .extension_analysis import (
    TemperatureCurves,
    angle_coverage,
    dynamic_ntk_alpha,
    implied_base,
    longrope_attention_factor,
    ntk_base,
    pair_regimes,
    temperature_curves,
    unseen_angles,
    yarn_ramp_by_turns,
)
from .learned import (
    EmbeddingSum,
    PositionOutOfRangeError,
    embedding_sum_as_linear,
    learned_table,
    lookup_positions,
    neighbour_cosine,
    random_cosine_band,
    row_distances,
)
from .model_config import rope_frequencies_from_config
from .positions import binary_positions, integer_positions, normalized_positions
from .relative import shaw_relative_bias, shaw_relative_index, t5_bucket_matrix, t5_relative_bucket
from .rope import (
    apply_rope,
    rope_angles,
    rope_inv_freq,
    rope_rotation_matrix,
    rope_scores,
    rope_wavelengths,
)
from .rope_analysis import (
    pairing_permutation,
    rope_near_repeats,
    rope_scores_mixed_pairing,
)
from .rope_scaling import ROPE_TYPES, RopeFrequencies, rope_frequencies
from .sinusoidal import sinusoidal, sinusoidal_inv_freq, sinusoidal_shift_matrix, sinusoidal_shift_residual

__all__ = [
    "COMPARED",
    "ENCODINGS",
    "MAX_ELEMENTS",
    "ROPE_TYPES",
    "EmbeddingSum",
    "ExtrapolationExcess",
    "PosEncError",
    "PositionOutOfRangeError",
    "RopeFrequencies",
    "TemperatureCurves",
    "alibi_bias",
    "alibi_closest_power_of_two",
    "alibi_key_only_bias",
    "alibi_receptive_field",
    "alibi_slope_exponents",
    "alibi_slopes",
    "angle_coverage",
    "apply_rope",
    "attention",
    "attention_scores",
    "attention_weights",
    "binary_positions",
    "causal_mask",
    "diagonal_spread",
    "dynamic_ntk_alpha",
    "embedding_sum_as_linear",
    "extrapolation_excess",
    "implied_base",
    "integer_positions",
    "learned_table",
    "longrope_attention_factor",
    "lookup_positions",
    "neighbour_cosine",
    "neighbour_distances",
    "normalized_positions",
    "ntk_base",
    "pair_regimes",
    "pairing_permutation",
    "permutation_equivariance_residual",
    "position_cross_scores",
    "position_score_matrix",
    "projection_weights",
    "random_cosine_band",
    "random_logits",
    "relative_positions",
    "rope_angles",
    "rope_decay_all_ones",
    "rope_decay_bound",
    "rope_decay_random",
    "rope_first_near_repeat",
    "rope_frequencies",
    "rope_frequencies_from_config",
    "rope_inv_freq",
    "rope_near_repeats",
    "rope_rotation_matrix",
    "rope_scores",
    "rope_scores_mixed_pairing",
    "rope_wavelengths",
    "rotations_in_context",
    "row_distances",
    "self_attention",
    "shaw_relative_bias",
    "shaw_relative_index",
    "sinusoidal",
    "sinusoidal_inv_freq",
    "sinusoidal_shift_matrix",
    "sinusoidal_shift_residual",
    "sinusoidal_similarity",
    "softmax",
    "t5_bucket_matrix",
    "t5_max_exact",
    "t5_relative_bucket",
    "temperature_curves",
    "toeplitz_deviation",
    "toeplitz_residual",
    "token_embeddings",
    "unseen_angles",
    "yarn_ramp_by_turns",
    "yarn_regimes",
]
