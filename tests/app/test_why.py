r"""Page 1 (why position): the residual sentence holds for every sentence pair, width and seed the sliders offer."""

from __future__ import annotations

import pytest

from posenc_core import ENCODINGS, FAMILIES
from posenc_ui.lessons.why.view import SENTENCES, VIEW, check_selected

DIMS = range(VIEW.param("dim").lo, VIEW.param("dim").hi + 1, VIEW.param("dim").step)
SEEDS = range(VIEW.param("seed").lo, VIEW.param("seed").hi + 1)


@pytest.mark.parametrize("pair", SENTENCES)
def test_none_stays_at_rounding_and_every_encoding_far_above_for_every_seed(pair: str) -> None:
    r"""``why.residuals``: *none* at most about 1e-15, every encoding above 1e-3, over the whole slider range."""
    for dim in DIMS:
        for seed in SEEDS:
            for encoding in ENCODINGS:
                check = check_selected({"pair": pair, "dim": dim, "seed": seed, "encoding": encoding})
                assert check.passed, (pair, dim, seed, encoding, check.residual)
                if FAMILIES[encoding].kind == "none":
                    assert check.residual < 2e-15
                else:
                    assert check.residual > 1e-3
