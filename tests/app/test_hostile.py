r"""Hostile input: junk in every query parameter of every built page, and junk pasted into the config box.

Pages and parameters come from :data:`posenc_ui.lessons.VIEWS` (never a fixed list), so a new page is swept as soon as
it lands. Each hostile value is put into *every* parameter of a page at once (one run per page and value keeps the
file fast); the notices expected are worked out parameter by parameter with the view's own ``Param.parse``, in
declaration order, exactly as a fresh session seeds its widgets. Widgets at their extremes are covered by
``test_pages.py``; here only text reaches the app.
"""

from __future__ import annotations

import json

import pytest
from drawn import sent_charts

from posenc_core import PosEncError, parse_config_text
from posenc_ui import catalog
from posenc_ui.frame import notice
from posenc_ui.lessons import VIEWS
from posenc_ui.lessons.real.model import PassageParam
from posenc_ui.presets import ConfigTextParam

HOSTILE = {
    "empty": "",
    "huge": "9" * 400,
    "negative": "-7",
    "nan": "nan",
    "inf": "inf",
    "minus_inf": "-inf",
    "unicode": "位置😀",
    "very_long": "1" * 5000,  # past Python's 4300-digit int() limit
    "list": "[1,2]",
    "bool": "true",
    "sql_html": "1'; DROP TABLE x;--<script>alert(1)</script>",
}
VIEW_IDS = [view.page_id for view in VIEWS]
BY_ID = {view.page_id: view for view in VIEWS}
# The config paste boxes (a passage box, which takes any prose, answers its own refusals: tests/real/test_page.py).
TEXT_PARAMS = [(view.page_id, p.name) for view in VIEWS for p in view.params if isinstance(p, ConfigTextParam)]


def swept(page_id: str) -> list:
    r"""The parameters the query-parameter sweep fills with junk: all but a passage box, whose junk is prose it must
    read (400 nines are a 400-token text: minutes of the real model's forwards) and whose refusals, hostile text
    included, are ``tests/real/test_page.py``'s."""
    return [p for p in BY_ID[page_id].params if not isinstance(p, PassageParam)]


_baseline: dict[str, int] = {}


def assert_clean(at) -> None:
    assert not at.exception, [e.value for e in at.exception]


def figures_at_default(open_page, page_id: str) -> int:
    r"""How many figures the page draws with no URL at all (computed once per page)."""
    if page_id not in _baseline:
        at = open_page(catalog.BY_ID[page_id].script, lang="en")
        assert_clean(at)
        _baseline[page_id] = len(sent_charts(at))
    return _baseline[page_id]


def expected_notices(page_id: str, raw: str) -> list[str]:
    r"""The notice of every parameter that ``raw`` is not a valid value for, in the order the page seeds them."""
    state: dict = {}
    out = []
    for param in swept(page_id):
        value, problem = param.parse([raw], state)
        state[param.name] = value
        if problem is not None:
            out.append(notice(problem, "en", BY_ID[page_id]))  # a choice named as its control shows it
    return out


@pytest.mark.parametrize("kind", list(HOSTILE))
@pytest.mark.parametrize("page_id", VIEW_IDS)
def test_junk_in_every_query_parameter_gives_notices_and_a_working_page(open_page, page_id: str, kind: str) -> None:
    raw = HOSTILE[kind]
    at = open_page(catalog.BY_ID[page_id].script, lang="en", params={p.name: raw for p in swept(page_id)})
    assert_clean(at)
    assert len(sent_charts(at)) >= figures_at_default(open_page, page_id)  # every figure still drawn
    assert [w.value for w in at.warning] == expected_notices(page_id, raw)
    if kind not in ("bool", "negative"):  # "true" / "-7" may be valid (toggle; clamped to a bound, with a notice)
        assert at.warning, "junk in the URL must be answered by a visible notice"


@pytest.mark.parametrize("kind", ["empty", "unicode", "very_long", "sql_html"])
def test_junk_language_and_embed_flags_fall_back_quietly(open_page, kind: str) -> None:
    page = catalog.BY_ID[VIEW_IDS[0]]
    at = open_page(page.script, params={"lang": HOSTILE[kind], "embed": HOSTILE[kind], "embed_options": HOSTILE[kind]})
    assert_clean(at)
    assert at.query_params["lang"] in ("en", "zh")
    assert sent_charts(at)


def test_repeated_keys_are_read_not_crashed_on(open_page) -> None:
    for view in VIEWS:
        at = open_page(
            catalog.BY_ID[view.page_id].script, lang="en", params={p.name: ["1", "2", "位置"] for p in view.params}
        )
        assert_clean(at)
        assert at.warning


# --- the config paste box -------------------------------------------------------------------------------------

GOOD_CONFIG = {"hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 4096, "rope_theta": 1e4}
BROKEN = {
    "broken": '{"hidden_size": 4096,',
    "not_object": "[1, 2, 3]",
    "nan": '{"rope_theta": NaN}',
    "empty": "   ",
    "huge": json.dumps({**GOOD_CONFIG, "pad": "x" * 70_000}),  # past the paste cap
    "deep": "[" * 5000 + "]" * 5000,  # would exhaust a recursive parser's stack
    "deep_in_cap": json.dumps(GOOD_CONFIG)[:-1] + ', "x": ' + "[" * 12 + "]" * 12 + "}",
    "wrong_types": json.dumps({**GOOD_CONFIG, "hidden_size": "big", "rope_scaling": [1]}),
    "bool_numbers": json.dumps({**GOOD_CONFIG, "hidden_size": True}),
    "head_dim_past_cap": json.dumps({**GOOD_CONFIG, "hidden_size": 2**40, "num_attention_heads": 1}),
    "length_past_cap": json.dumps({**GOOD_CONFIG, "max_position_embeddings": 2**60}),
    "factor_inf": json.dumps({**GOOD_CONFIG, "rope_scaling": {"rope_type": "linear", "factor": 1e308 * 10}}),
    "unknown_type": json.dumps({**GOOD_CONFIG, "rope_scaling": {"rope_type": "位置😀", "factor": 2}}),
}


@pytest.mark.skipif(not TEXT_PARAMS, reason="no page has a paste box yet")
@pytest.mark.parametrize(("page_id", "name"), TEXT_PARAMS)
def test_paste_box_refuses_junk_with_a_message(open_page, page_id: str, name: str) -> None:
    at = open_page(catalog.BY_ID[page_id].script, lang="en")
    box = at.text_area(key=f"{page_id}.{name}")
    charts = len(sent_charts(at))
    for kind, text in BROKEN.items():
        box = at.text_area(key=f"{page_id}.{name}")
        box.set_value(text).run()
        assert_clean(at)
        errors = [e.value for e in at.error]
        assert errors, f"{kind}: pasted junk must be answered by a message"
        assert len(sent_charts(at)) == charts, f"{kind}: the last good figure stays"
    at.text_area(key=f"{page_id}.{name}").set_value(json.dumps(GOOD_CONFIG)).run()
    assert_clean(at)
    assert not at.error  # and a good paste recovers


@pytest.mark.skipif(not TEXT_PARAMS, reason="no page has a paste box yet")
@pytest.mark.parametrize(("page_id", "name"), TEXT_PARAMS)
def test_requests_past_the_memory_caps_are_refused_with_an_explanation(open_page, page_id: str, name: str) -> None:
    r"""Slider bounds keep every other request inside the core's caps; a config in the URL can ask for more."""
    for kind in ("head_dim_past_cap", "length_past_cap"):
        for lang, says in (("en", "must be at most"), ("zh", "不能大于")):  # the refusal, in the reader's language
            at = open_page(catalog.BY_ID[page_id].script, lang=lang, params={name: BROKEN[kind]})
            assert_clean(at)
            assert any(says in e.value for e in at.error), [e.value for e in at.error]


@pytest.mark.parametrize("text", [BROKEN["huge"], BROKEN["deep"], BROKEN["nan"], BROKEN["deep_in_cap"]])
def test_config_parser_refuses_without_recursing(text: str) -> None:
    with pytest.raises(PosEncError):
        parse_config_text(text)


def test_a_10_mb_paste_is_refused_by_its_size_before_any_parsing(open_page, monkeypatch) -> None:
    r"""The refusal costs the server one length check: json is never called, and the page's whole rerun stays short.
    (In Chromium a 10 MB paste still takes seconds before the server sees it: Streamlit's own text area sends it on
    blur; a ``max_chars`` cap would make the browser drop the paste silently instead.)"""
    import json as json_module
    import time

    text = json.dumps({**GOOD_CONFIG, "pad": "x" * 10_000_000})
    calls: list[int] = []
    real_loads = json_module.loads
    monkeypatch.setattr(json_module, "loads", lambda s, *a, **k: calls.append(len(s)) or real_loads(s, *a, **k))
    with pytest.raises(PosEncError, match="characters"):
        parse_config_text(text)
    assert not [n for n in calls if n >= 10_000_000]
    at = open_page(catalog.BY_ID["extension"].script, lang="zh")
    start = time.perf_counter()
    at.text_area(key="extension.config").set_value(text).run()
    took = time.perf_counter() - start
    assert_clean(at)
    assert any("10,000," in e.value for e in at.error)  # the size, in the reader's language
    assert took < 2.0, f"a 10 MB paste took {took:.2f} s to refuse"
    assert not [n for n in calls if n >= 10_000_000]
