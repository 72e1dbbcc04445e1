r"""Moving one widget never changes another, unless the other's allowed range no longer holds its value.

Streamlit treats a slider whose range changed as a new widget and resets it to its minimum: moving the Relative
page's L_k from 12 to 13 once dropped L_q from 12 to 1. Every slider of every page is driven here, up and down, and
every other widget must keep its value, or move to exactly the nearest allowed one (its own ``clamp``).
"""

from __future__ import annotations

from typing import Any

import pytest

from posenc_ui import catalog
from posenc_ui.frame import widget_key
from posenc_ui.lessons import VIEWS
from posenc_ui.state import IntParam


def _values(at, view) -> dict[str, Any]:
    out = {}
    for param in view.params:
        key = widget_key(view.page_id, param.name)
        if key in at.session_state:
            value = at.session_state[key]
            out[param.name] = tuple(value) if isinstance(value, list) else value
    return out


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.page_id)
def test_moving_a_slider_moves_no_other_widget_unless_its_range_forces_it(view, open_page) -> None:
    at = open_page(catalog.BY_ID[view.page_id].script, lang="en")
    assert not at.exception
    moved = 0
    for param in view.params:
        if not isinstance(param, IntParam):
            continue
        key = widget_key(view.page_id, param.name)
        for direction in ("up", "down"):
            sliders = [s for s in at.slider if s.key == key]
            if not sliders:  # not drawn with these settings
                break
            before = _values(at, view)
            bound = sliders[0].max if direction == "up" else sliders[0].min
            target = param.clamp(bound, before)
            if target == before[param.name]:
                target = param.clamp(param.lo if direction == "up" else sliders[0].max, before)
            if target == before[param.name]:
                continue
            sliders[0].set_value(target).run()
            assert not at.exception, (param.name, target)
            after = _values(at, view)
            assert after[param.name] == target
            state = {**before, param.name: target}
            for other in view.params:
                if other.name != param.name and other.name in before:
                    assert after[other.name] == other.clamp(before[other.name], state), (
                        f"{view.page_id}: moving {param.name} to {target} changed {other.name} "
                        f"from {before[other.name]} to {after[other.name]}"
                    )
            moved += 1
    assert moved or not any(isinstance(p, IntParam) for p in view.params)


def test_relative_queries_keep_their_value_when_keys_grow_and_are_clamped_with_a_notice(open_page) -> None:
    at = open_page(catalog.BY_ID["relative"].script, lang="en")
    keys, queries = widget_key("relative", "key_length"), widget_key("relative", "query_length")
    at.slider(key=keys).set_value(13).run()
    assert at.session_state[queries] == 12  # the reported bug: it fell to 1
    at.slider(key=queries).set_value(13).run()
    at.slider(key=keys).set_value(8).run()
    assert at.session_state[queries] == 8
    assert any("moved from 13 to 8" in c.value for c in at.caption)


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.page_id)
def test_links_carry_only_what_differs_from_the_defaults(view, open_page) -> None:
    r"""An untouched page's address is its language alone; a moved slider adds exactly itself."""
    at = open_page(catalog.BY_ID[view.page_id].script, lang="zh")
    assert dict(at.query_params) == {"lang": "zh"}
    slider = next((s for s in at.slider if s.key and s.key.startswith(f"{view.page_id}.")), None)
    if slider is None:
        return
    name = slider.key.split(".", 1)[1]
    param = view.param(name)
    target = param.clamp(slider.max if slider.value != slider.max else slider.min, _values(at, view))
    slider.set_value(target).run()
    assert at.query_params[name] == param.encode(target)
    now = _values(at, view)
    others = {p.name for p in view.params if p.name != name and now[p.name] != p.clamp(p.default, now)}
    assert set(at.query_params) == {"lang", name} | others  # only what now differs from its default
    moved_back = param.clamp(param.default, _values(at, view))
    at.slider(key=slider.key).set_value(moved_back).run()
    assert name not in at.query_params


def test_the_why_page_opens_on_a_sentence_in_the_readers_language(open_page) -> None:
    english, chinese = (open_page(catalog.BY_ID["why"].script, lang=lang) for lang in ("en", "zh"))
    assert english.session_state[widget_key("why", "pair")] == "dog"
    assert chinese.session_state[widget_key("why", "pair")] == "acquire"
    assert "pair" not in english.query_params and "pair" not in chinese.query_params  # each its own default
