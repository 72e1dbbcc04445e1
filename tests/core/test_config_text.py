r"""``parse_config_text``: what a pasted config.json is refused for, and how fast (the paste box's own edges)."""

from __future__ import annotations

import time

import pytest

import posenc_core as pc
from posenc_core.rope_scaling.config_text import MAX_CONFIG_CHARS, MAX_CONFIG_DEPTH


@pytest.mark.parametrize(
    ("text", "kind"),
    [("null", "null"), ("[]", "array"), ("3", "number"), ("2.5", "number"), ('"s"', "string"), ("true", "boolean")],
)
def test_json_that_is_not_an_object_is_named_by_its_json_type(text, kind):
    with pytest.raises(pc.PosEncError) as err:
        pc.parse_config_text(text)
    assert (err.value.code, err.value.fields) == ("config_not_object", {"kind": kind})
    assert f"JSON of type {kind}" in str(err.value)  # not "nests deeper" for null, not "a int"


@pytest.mark.parametrize(
    "text",
    ["[" * (MAX_CONFIG_DEPTH + 1) + "]" * (MAX_CONFIG_DEPTH + 1), "[" * 60_000],  # the second overflows the parser
)
def test_json_nested_too_deep_is_refused_as_too_deep(text):
    with pytest.raises(pc.PosEncError) as err:
        pc.parse_config_text(text)
    assert (err.value.code, err.value.fields) == ("config_too_deep", {"limit": MAX_CONFIG_DEPTH})


def test_a_ten_megabyte_paste_is_refused_by_its_size_before_it_is_parsed():
    text = '{"a": [' + "1," * 5_000_000 + "1]}"
    start = time.perf_counter()
    with pytest.raises(pc.PosEncError) as err:
        pc.parse_config_text(text)
    elapsed = time.perf_counter() - start
    assert (err.value.code, err.value.fields["limit"]) == ("config_too_long", MAX_CONFIG_CHARS)
    assert elapsed < 0.05  # measured: ~0.1 ms; parsing it would take about a second


def test_a_config_passed_as_something_else_names_its_json_type():
    with pytest.raises(pc.PosEncError) as err:
        pc.model_layers([("hidden_size", 4096)])
    assert err.value.fields == {"kind": "array"}
