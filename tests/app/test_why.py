r"""Page 1 (why position): the residual sentence holds for every sentence pair, width and seed the sliders offer."""

from __future__ import annotations

import numpy as np
import pytest

from posenc_core import ENCODINGS, FAMILIES
from posenc_ui.lessons.why.view import SENTENCES, VIEW, check_selected

DIMS = range(VIEW.param("dim").lo, VIEW.param("dim").hi + 1, VIEW.param("dim").step)
SEEDS = range(VIEW.param("seed").lo, VIEW.param("seed").hi + 1)


@pytest.mark.parametrize("pair", SENTENCES)
def test_none_stays_at_rounding_and_every_encoding_far_above_for_every_seed(pair: str) -> None:
    r"""``why.residuals``: *none* at most d·ε, every encoding above 1e-3, over the whole slider range.

    d·ε is the rounding a d-term float64 dot product may carry relative to its terms (Higham, *Accuracy and Stability
    of Numerical Algorithms*, 2002, §3.1: |error| ≤ γ_d Σ|x_i y_i|, γ_d ≈ d·ε); the layer's scores and outputs are
    such sums, and which order BLAS adds them in depends on the processor, so no fixed figure like 1e-15 holds."""
    for dim in DIMS:
        for seed in SEEDS:
            for encoding in ENCODINGS:
                check = check_selected({"pair": pair, "dim": dim, "seed": seed, "encoding": encoding})
                assert check.passed, (pair, dim, seed, encoding, check.residual)
                if FAMILIES[encoding].kind == "none":
                    assert check.residual <= dim * np.finfo(np.float64).eps
                else:
                    assert check.residual > 1e-3
