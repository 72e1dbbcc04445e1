r"""A refusal in the reader's language: every error code the core can raise has a sentence in both languages."""

from __future__ import annotations

import re
import string

import pytest

import posenc_core as core
from posenc_core import ERROR_FIELDS, PosEncError
from posenc_ui.i18n import LANGS, has, t
from posenc_ui.lesson import PageRefusal
from posenc_ui.refusals import refusal_text

CJK = re.compile(r"[\u4e00-\u9fff]")


def _placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("code", sorted(ERROR_FIELDS))
def test_every_error_code_has_a_sentence_that_uses_exactly_its_fields(code: str, lang: str) -> None:
    sentence = t(f"error.{code}", lang)
    assert _placeholders(sentence) == ({"message"} if code == "invalid" else set(ERROR_FIELDS[code]))


def test_an_error_must_carry_the_fields_its_code_declares() -> None:
    with pytest.raises(TypeError, match="takes fields"):
        PosEncError("x", code="too_large", name="dim")  # no value, no bound: a bug in the raise, caught at once
    with pytest.raises(TypeError, match="takes fields"):
        PosEncError("x", code="no_such_code")


# Each call is refused by a different validator or check; the reader sees the refusal in Chinese, values as code.
REFUSED = [
    lambda: core.sinusoidal(8, 5),  # not_even
    lambda: core.sinusoidal(8, 4, base=-1.0),  # not_above
    lambda: core.sinusoidal("8", 4),  # not_integer
    lambda: core.alibi_bias(4, 2**20),  # too_many_elements
    lambda: core.relative_positions(5, 3),  # queries_exceed_keys
    lambda: core.lookup_positions(core.learned_table(4, 2), [7]),  # position_out_of_range
    lambda: core.rope_frequencies(8, rope_scaling={"rope_type": "linear", "factor": 2.0, "beta_fast": 3}),
    lambda: core.rope_frequencies_from_config({"rope_theta": 1e4}),  # no_head_dim
    lambda: core.parse_config_text("x" * 70_000),  # config_too_long
    lambda: core.parse_config_text("{'a': 1}"),  # config_not_json
    lambda: core.sinusoidal(8, 4, layout="diagonal"),  # not_choice
]


@pytest.mark.parametrize("call", REFUSED)
def test_core_refusals_read_in_chinese_with_the_values_as_code(call) -> None:
    with pytest.raises(PosEncError) as caught:
        call()
    err = caught.value
    assert err.code != "invalid", str(err)
    zh = refusal_text(err, "zh")
    assert CJK.search(zh) and not re.search(r"\bmust\b|\bgot\b", zh), zh
    for value in err.fields.values():
        if isinstance(value, str):
            assert value.replace("`", "")[:20] in zh, (value, zh)


def test_an_uncoded_refusal_shows_the_core_message_under_a_translated_note() -> None:
    err = PosEncError("table and weights are too large: the scores overflow float64")
    assert "float64" in refusal_text(err, "zh") and CJK.search(refusal_text(err, "zh"))
    assert refusal_text(err, "en").strip("` ") == str(err)


def test_a_page_refusal_is_said_in_the_pages_own_words() -> None:
    err = PageRefusal("extension.longrope_needs_factors")
    assert has("extension.longrope_needs_factors", "zh")
    assert refusal_text(err, "zh") == t("extension.longrope_needs_factors", "zh") != str(err)
    assert isinstance(err, PosEncError) and str(err) == t("extension.longrope_needs_factors", "en")


# A pasted text that parses but is no object: the reader is told what it is, in words of their language.
NOT_OBJECTS = {
    "[1, 2]": ("an array", "数组"),
    "3": ("a number", "一个数"),
    "2.5": ("a number", "一个数"),
    '"rope_theta"': ("a string", "字符串"),
    "true": ("a boolean", "布尔值"),
}


@pytest.mark.parametrize("text", list(NOT_OBJECTS))
def test_a_paste_that_is_no_object_says_what_it_is_with_the_right_article(text: str) -> None:
    with pytest.raises(PosEncError) as caught:
        core.parse_config_text(text)
    en, zh = NOT_OBJECTS[text]
    assert caught.value.code == "config_not_object"
    assert en in refusal_text(caught.value, "en") and zh in refusal_text(caught.value, "zh")
    assert not re.search(r"\ba (int|float|list|str|bool|array)\b", refusal_text(caught.value, "en"))


def test_pasting_null_says_it_is_null_not_too_deep() -> None:
    with pytest.raises(PosEncError) as caught:
        core.parse_config_text("null")
    assert caught.value.code == "config_not_object"
    assert "JSON null" in refusal_text(caught.value, "en")
