r"""The real-model page's shipped results (``posenc_ui/lessons/real/shipped.py``), without the model: the committed
file is this checkout's (its passage, model file and transformers release), holds every recipe at every setting the
page offers, reads back through its codec unchanged, and lets the page draw every figure with every check passing at
every setting a reader can pick, the slider of seeds included (that it then imports no torch is
``tests/app/test_no_torch.py``'s to check). That they equal what the model computes now is
``tests/real/test_shipped.py``'s to check (it runs the model)."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from drawn import sent_charts, shown_checks
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from posenc_real.relativity import ShiftCurve
from posenc_ui import catalog
from posenc_ui.i18n import t
from posenc_ui.lessons.real import relativity, shipped, sinks
from posenc_ui.lessons.real.view import VIEW
from posenc_ui.state import ChoiceParam, IntParam, defaults

DEFAULTS = defaults(VIEW.params)


def _roundtrip(value: Any) -> Any:
    r"""``value`` through the file's codec: encoded, its structure through JSON text, decoded from copies of its
    arrays (what the page reads back)."""
    arrays: dict[str, np.ndarray] = {}
    node = json.loads(json.dumps(shipped._encode(value, arrays)))
    return shipped._decode(node, {key: array.copy() for key, array in arrays.items()})


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    if dataclasses.is_dataclass(a):
        return type(a) is type(b) and all(_same(getattr(a, f.name), getattr(b, f.name)) for f in dataclasses.fields(a))
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(map(_same, a, b))
    return type(a) is type(b) and a == b


def test_the_committed_results_are_this_checkouts() -> None:
    assert shipped.why_not_shipped() is None, shipped.why_not_shipped()


def test_every_recipe_is_shipped_at_every_setting_the_page_offers() -> None:
    results = shipped.results()
    assert results is not None
    wanted = {(recipe.name, settings) for recipe in shipped.RECIPES.values() for settings in recipe.settings()}
    assert set(results) == wanted
    assert shipped.answers(shipped.DEFAULT_TEXT) and not shipped.answers(shipped.DEFAULT_TEXT + " More.")


def test_the_settings_the_page_offers_are_the_ones_shipped() -> None:
    by_name = {param.name: param for param in VIEW.params}
    offered = {
        name: tuple(range(p.lo, p.hi + 1, p.step)) if isinstance(p, IntParam) else p.options
        for name, p in by_name.items()
        if isinstance(p, ChoiceParam | IntParam)
    }
    assert relativity.SEEDS == offered["seed"]
    assert shipped.RECIPES["relativity.shuffled"].domains == (offered["seed"],)
    assert {window for _, window in sinks.CACHES} == set(offered["window"])  # every window decoded with the text
    assert shipped.RECIPES["relativity.curve"].domains == ()  # Δ picks a point of the one curve
    assert tuple(shipped.results()[("relativity.curve", ())].deltas) == offered["delta"]


def test_each_result_reads_back_through_the_codec_unchanged() -> None:
    for key, value in shipped.results().items():
        assert _same(_roundtrip(value), value), key


def test_the_codec_rebuilds_only_result_types() -> None:
    arrays = {"a0": np.zeros(2)}
    with pytest.raises(ValueError, match="not a result type"):
        shipped._decode({"dataclass": "subprocess:Popen", "fields": {}}, arrays)
    with pytest.raises(TypeError, match="cannot ship"):
        shipped._encode(object(), {})


def test_the_files_model_numbers_are_the_published_ones() -> None:
    known = shipped.facts()  # the GGUF header's values: tests/real/test_load.py reads them from the file itself
    assert known["num_layers"] == 30 and known["head_dim"] == 64 and known["num_heads"] == 9
    assert known["rope_theta"] == 100_000.0 and known["max_position_embeddings"] == 8_192
    made = shipped.manifest()["made"]
    assert made["command"] == "python -m posenc_ui.lessons.real"


def _settings() -> list[dict[str, Any]]:
    r"""Every value of every slider of the page, one at a time, the others at their defaults."""
    changes = [{}]
    for param in VIEW.params:
        if isinstance(param, IntParam):
            changes += [{param.name: value} for value in range(param.lo, param.hi + 1, param.step)]
        elif isinstance(param, ChoiceParam):
            changes += [{param.name: value} for value in param.options]
    return [{**DEFAULTS, **change} for change in changes]


@pytest.mark.parametrize("name", sorted(VIEW.checks))
def test_every_check_passes_at_every_setting_on_the_shipped_passage(name: str) -> None:
    check: Callable[..., Any] = VIEW.checks[name]
    failed = [
        {k: v for k, v in values.items() if k != "text" and v != DEFAULTS[k]}
        for values in _settings()
        if not check(values).passed
    ]
    assert not failed, failed


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_page_draws_the_shipped_passage_without_the_model(lang: str) -> None:
    at = AppTest.from_file(str(catalog.ROOT / catalog.HOME_SCRIPT), default_timeout=60)
    at.switch_page(catalog.BY_ID["real"].script)
    at.query_params.update({"lang": lang})
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]  # a failing check or a refusal would be here
    assert len(sent_charts(at)) == len(VIEW.figures)
    assert len(shown_checks(at)) == len(VIEW.checks)
    tokens = shipped.results()[("model.passage_ids", ())].size
    assert t("real.shipped", lang, tokens=f"{tokens:,}") in [caption.value for caption in at.caption]


_numbers = st.floats(allow_nan=True, allow_infinity=True, width=64)
_leaves = st.one_of(
    _numbers,
    st.integers(-(2**53), 2**53),
    st.text(max_size=8),
    st.none(),
    st.booleans(),
    st.lists(_numbers, max_size=6).map(lambda xs: np.asarray(xs, dtype=np.float64)),
    st.lists(st.integers(-(2**31), 2**31), max_size=6).map(lambda xs: np.asarray(xs, dtype=np.int64)),
)
_trees = st.recursive(
    _leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(tuple), st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=12,
)


def _equal_with_nan(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
        return True
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(_equal_with_nan(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return isinstance(b, tuple) and len(a) == len(b) and all(map(_equal_with_nan, a, b))
    return type(a) is type(b) and a == b


@settings(max_examples=200, deadline=None)
@given(tree=_trees, span=_numbers)
def test_the_codec_keeps_any_result_exactly(tree: Any, span: float) -> None:
    r"""Any nest of tuples, string-keyed dicts, numbers (NaN, ±inf, −0.0 included) and arrays inside a result
    dataclass reads back as it went in, in type, order and value (arrays bit for bit; a number's NaN stays NaN, its
    sign is not kept: JSON writes one NaN)."""
    curve = ShiftCurve(
        deltas=np.arange(3), max_change=np.zeros(3), largest_position=np.arange(3), logit_span=span, length=3
    )
    value = (curve, tree)
    back = _roundtrip(value)
    assert _equal_with_nan(back[1], tree)
    assert _same(dataclasses.replace(back[0], logit_span=0.0), dataclasses.replace(curve, logit_span=0.0))
    assert _equal_with_nan(back[0].logit_span, span)
    assert np.isnan(span) or np.signbit(back[0].logit_span) == np.signbit(span)  # −0.0 stays −0.0
