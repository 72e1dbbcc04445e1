r"""URL values are parsed, clamped and encoded predictably; a changed value always reports a Problem."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from posenc_ui.state import BoolParam, ChoiceParam, IntListParam, IntParam, Problem, defaults, encode_all

DIM = IntParam("dim", 64, lo=8, hi=1024, step=8)
BASE = ChoiceParam("base", 10000.0, options=(100.0, 1000.0, 10000.0, 100000.0))
ENC = ChoiceParam("encoding", "none", options=("none", "rope"))
DIMS = IntListParam("dims", (0, 1), lo=0, hi=1023, hi_from="dim", hi_offset=-1, max_items=3)
WRAP = BoolParam("wrap", False)


@pytest.mark.parametrize(
    ("param", "raw", "value", "kind"),
    [
        (DIM, "64", 64, None),
        (DIM, "63", 64, "clamped"),  # snapped to the step grid
        (DIM, "99999", 1024, "clamped"),
        (DIM, "-5", 8, "clamped"),
        (DIM, "abc", 64, "invalid"),
        (DIM, "nan", 64, "invalid"),
        (DIM, "", 64, "invalid"),
        (BASE, "1e4", 10000.0, None),
        (BASE, "12000", 10000.0, "clamped"),  # nearest option on a log scale
        (BASE, "-3", 10000.0, "invalid"),
        (ENC, "rope", "rope", None),
        (ENC, "ROPE", "none", "invalid"),
        (WRAP, "true", True, None),
        (WRAP, "0", False, None),
        (WRAP, "maybe", False, "invalid"),
    ],
)
def test_parse(param, raw, value, kind) -> None:
    parsed, problem = param.parse(raw, {})
    assert parsed == value
    assert (problem.kind if problem else None) == kind


def test_dependent_bound_follows_the_other_widget() -> None:
    # dims may go up to dim − 1 (hi_from="dim", hi_offset=-1): at dim = 64 that is 63, so 100 is dropped and said so;
    # at dim = 512 it is 511, and all three stay.
    assert DIMS.parse("0,5,100", {"dim": 64}) == ((0, 5), Problem("dims", "0,5,100", "clamped", "0,5"))
    assert DIMS.parse("0,5,100", {"dim": 512}) == ((0, 5, 100), None)
    # sorted, each once, at most max_items = 3: {3, 1, 9, 2} → 1, 2, 3 (9 is the fourth, and dropped)
    assert DIMS.clamp((3, 1, 1, 9, 2), {"dim": 512}) == (1, 2, 3)


def test_defaults_and_encoding_round_trip() -> None:
    params = (DIM, BASE, ENC, DIMS, WRAP)
    expected = {"dim": 64, "base": 10000.0, "encoding": "none", "dims": (0, 1), "wrap": False}  # the declared defaults
    assert defaults(params) == expected
    encoded = encode_all(params, expected)
    assert encoded == {"dim": "64", "base": "10000", "encoding": "none", "dims": "0,1", "wrap": "0"}
    assert {p.name: p.parse(encoded[p.name], expected) for p in params} == {k: (v, None) for k, v in expected.items()}


@given(st.text(max_size=12))
def test_any_text_gives_an_allowed_value(raw: str) -> None:
    value, problem = DIM.parse(raw, {})
    assert 8 <= value <= 1024 and value % 8 == 0
    assert problem is None or problem.used == str(value)


#: dim's allowed values, written out: 8, 16, …, 1024.
DIM_GRID = range(8, 1024 + 1, 8)


@given(st.integers(min_value=-(10**6), max_value=10**6))
def test_clamp_gives_the_allowed_value_nearest_the_number(number: int) -> None:
    r"""Against the grid written out: the value is on it, and no grid value lies nearer the number (a tie, such as 12
    between 8 and 16, may go either way)."""
    clamped = DIM.clamp(number, {})
    assert clamped in DIM_GRID
    assert abs(clamped - number) == min(abs(allowed - number) for allowed in DIM_GRID)
