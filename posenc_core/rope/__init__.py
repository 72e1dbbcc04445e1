r"""Rotary position embedding, RoPE (Su et al. 2021, "RoFormer", arXiv:2104.09864, §3.2–3.4).

Split a query or key of dimension d into d/2 two-dimensional pairs and turn pair i of the vector at position m by the
angle :math:`m\,\theta_i`, with :math:`\theta_i = \text{base}^{-2i/d}`:

.. math::
    \begin{pmatrix} x'_1 \\ x'_2 \end{pmatrix} =
    \begin{pmatrix} \cos m\theta_i & -\sin m\theta_i \\ \sin m\theta_i & \cos m\theta_i \end{pmatrix}
    \begin{pmatrix} x_1 \\ x_2 \end{pmatrix}.

Rotations compose, :math:`R_m^\top R_n = R_{n-m}`, so the score :math:`(R_m q)^\top (R_n k) = q^\top R_{n-m} k` depends
on the positions only through the offset n − m: absolute rotations, relative scores. Rotations also keep lengths, so
RoPE changes the angle between q and k, never their norms.

Which coordinates form a pair is a convention, and the two in use are not interchangeable:

* ``pairing="half"`` — pair i is (x_i, x_{i+d/2}); Hugging Face / GPT-NeoX ``rotate_half``.
* ``pairing="interleaved"`` — pair i is (x_{2i}, x_{2i+1}); the RoFormer paper, GPT-J, Meta's original Llama code.

Both rotate by +m·θ_i and differ only by a fixed permutation of the dimensions; a checkpoint trained with one and run
with the other silently scores with the wrong pairs (HF permutes Meta's q/k weights when converting for this reason):
:func:`pairing_permutation` is that reordering, and :func:`rope_scores_mixed_pairing` scores with the two mixed.

Each step of the derivation, from the requirement to the block-diagonal rotation, is measured in :mod:`.derivation`;
the same rotation on an image's patch grid (half the pairs per axis) is :mod:`.axial`; three axes (time, height,
width) sharing one head, for text, images and video, is :mod:`.mrope`; and RoPE inside linear
attention, where a per-token rotation survives the kernel trick, is :mod:`.linear`.

What the page measures on top: the long-range decay of §3.4.3 (:func:`rope_decay_bound`, the all-ones curve and
the random-vector band, computed in chunks so 10^6 distances stay within a few tens of MB), and when a set of
rotating pairs first comes back to where it started (:func:`rope_near_repeats`; the clock of the WeChat article
「Transformer位置编码问题」).
"""

from .axial import apply_rope_2d, patch_grid, rope_2d_relative_residual, rope_2d_scores
from .base_bound import rope_base_lower_bound, rope_similarity_reach
from .checks import (
    pairing_residual,
    rope_decay_random_expected,
    rope_decay_random_z,
    rope_period_gaps,
    rope_relative_gaps,
)
from .curves import RopeDecayTable, rope_decay_all_ones, rope_decay_bound, rope_decay_random, rope_near_repeats
from .derivation import RotationChecks, complex_form_residual, rotation_checks, row_vector_gaps
from .linear import LINEAR_METHODS, elu_feature_map, rope_linear_attention, rope_linear_attention_residual
from .mrope import (
    MROPE_AXES,
    mrope_angles,
    mrope_axis_wavelengths,
    mrope_grid_scores,
    mrope_offset_scores,
    mrope_pair_axes,
    mrope_position_ids,
)
from .rotation import (
    MAX_ROTARY_DIM,
    PAIRINGS,
    apply_rope,
    pair_index,
    pair_wavelengths,
    pairing_permutation,
    rope_angles,
    rope_inv_freq,
    rope_offset_scores,
    rope_rotation_matrix,
    rope_scores,
    rope_scores_mixed_pairing,
    rope_wavelengths,
)

__all__ = [
    "LINEAR_METHODS",
    "MAX_ROTARY_DIM",
    "MROPE_AXES",
    "PAIRINGS",
    "RopeDecayTable",
    "RotationChecks",
    "apply_rope",
    "apply_rope_2d",
    "complex_form_residual",
    "elu_feature_map",
    "mrope_angles",
    "mrope_axis_wavelengths",
    "mrope_grid_scores",
    "mrope_offset_scores",
    "mrope_pair_axes",
    "mrope_position_ids",
    "pair_index",
    "pair_wavelengths",
    "pairing_permutation",
    "pairing_residual",
    "patch_grid",
    "rope_2d_relative_residual",
    "rope_2d_scores",
    "rope_angles",
    "rope_base_lower_bound",
    "rope_decay_all_ones",
    "rope_decay_bound",
    "rope_decay_random",
    "rope_decay_random_expected",
    "rope_decay_random_z",
    "rope_inv_freq",
    "rope_linear_attention",
    "rope_linear_attention_residual",
    "rope_near_repeats",
    "rope_offset_scores",
    "rope_period_gaps",
    "rope_relative_gaps",
    "rope_rotation_matrix",
    "rope_scores",
    "rope_scores_mixed_pairing",
    "rope_similarity_reach",
    "rope_wavelengths",
    "rotation_checks",
    "row_vector_gaps",
]
