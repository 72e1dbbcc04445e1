r"""What each kind of layer of a model can see: the distances in its view and the wavelengths it turns with.

A layer's view is its window (a sliding window, a chunk) or, without one, the whole context. Within that view a pair
whose wavelength :math:`\lambda_i = 2\pi/\theta_i` is shorter than the view turns at least once, so its angle repeats
and tells distances apart only modulo λ; a pair whose wavelength is longer turns less than once, so its angle grows
with the distance all across the view, a coarse but unambiguous ruler. A layer without RoPE (NoPE) turns nothing: it
tells keys apart by content and, under the causal mask, by how many keys it sees (:mod:`posenc_core.nope`).

Paper: Su et al. 2021 (RoFormer), arXiv:2104.09864, §3.2 (θ_i = b^{−2i/d}); the layer designs are the models' configs
read by :func:`~posenc_core.model_layers`.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..errors import as_int
from .layers import distinct_layer_types

__all__ = ["LayerReach", "layer_reach"]


class LayerReach(NamedTuple):
    r"""One kind of layer: how many layers, whether it rotates, its view and its wavelengths."""

    layer_type: str  # the kind's name (LayerPosition.layer_type: "nope" where it does not rotate)
    count: int  # layers of this kind
    rotates: bool
    span: int  # keys it can see back: its window, else the context length
    pairs: int  # pairs that turn (θ > 0)
    shortest: float  # shortest wavelength 2π/θ (0 without rotation)
    longest: float  # longest wavelength (0 without rotation)
    turning: int  # pairs with λ ≤ span: at least one full turn within the view


def layer_reach(layers: object, *, context_length: int) -> tuple[LayerReach, ...]:
    r"""For each kind of layer in ``layers`` (:func:`~posenc_core.model_layers`' records, in order of first
    appearance), its view :math:`\min(w, L)` (w its window, none: L = ``context_length``) and its wavelengths
    :math:`\lambda_i = 2\pi/\theta_i`: the shortest, the longest, and how many are at most the view.

    Paper: Su et al. 2021 (RoFormer), arXiv:2104.09864, §3.2.
    """
    kinds = distinct_layer_types(layers)
    context_length = as_int("context_length", context_length, lo=1, hi=2**40)
    out = []
    for kind in kinds:
        count = sum(layer.same_kind(kind) for layer in layers)
        span = context_length if kind.window is None else min(kind.window, context_length)
        if not kind.rotates or kind.frequencies is None:
            out.append(LayerReach(kind.layer_type, count, False, span, 0, 0.0, 0.0, 0))
            continue
        theta = kind.frequencies.inv_freq[kind.frequencies.inv_freq > 0]
        with np.errstate(over="ignore"):  # a subnormal θ: an infinite wavelength, which never turns
            # λ_i = 2π / θ_i
            wavelengths = 2 * np.pi / theta
        out.append(
            LayerReach(
                kind.layer_type,
                count,
                True,
                span,
                int(theta.size),
                float(wavelengths.min()) if theta.size else 0.0,
                float(wavelengths.max()) if theta.size else 0.0,
                int(np.count_nonzero(wavelengths <= span)),
            )
        )
    return tuple(out)
