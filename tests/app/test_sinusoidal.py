r"""Page 3 (sinusoidal): its checks say only what the numbers show, at every setting a reader can reach."""

from __future__ import annotations

import pytest

from posenc_ui.i18n import t
from posenc_ui.lessons.sinusoidal.view import BASES, check_errata_shift, check_stripes


@pytest.mark.parametrize("base", BASES)
@pytest.mark.parametrize("length", [4, 128, 4096])
@pytest.mark.parametrize("dim", [4, 128, 1024])
def test_the_stripes_check_claims_flat_stripes_only_where_there_are_some(base: float, length: int, dim: int) -> None:
    check = check_stripes({"length": length, "dim": dim, "base": base})
    assert check.passed
    assert (check.fmt.get("count", 0) > 0) == (check.key == "sinusoidal.check_stripes")


def test_base_100_at_128_positions_has_no_flat_stripe_and_says_so() -> None:
    check = check_stripes({"length": 128, "dim": 64, "base": 100.0})
    assert check.key == "sinusoidal.check_stripes_none" and check.passed
    assert float(check.fmt["angle"]) > 0.1  # the slowest pair, 100^(-62/64)·127 ≈ 1.47 rad
    for lang in ("en", "zh"):
        assert "{" not in t(check.key, lang, residual="0", **check.fmt)


@pytest.mark.parametrize("offset", [377, 747])  # d = 4, base 100: the flipped, then the θ-less matrix lands
def test_the_errata_check_does_not_call_a_zero_gap_a_miss(offset: int) -> None:
    check = check_errata_shift({"dim": 4, "base": 100.0, "offset": offset})
    assert check.passed and min(float(check.fmt["no_theta"]), float(check.fmt["flipped"])) < 0.005
    assert "miss" not in t(check.key, "en", residual="0", **check.fmt)
