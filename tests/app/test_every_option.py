r"""No option the app offers ends in an error: every choice of every page, picked from the defaults and opened from a
shared link, draws its figures with no refusal, no failing check and no traceback.

The list of choices is derived from the pages' views (every :class:`~posenc_ui.state.ChoiceParam` and
:class:`~posenc_ui.state.FollowingChoiceParam`, whatever its widget), so a choice added to a page is walked here
without editing this file. Refusals are for what a reader types (the paste box), never for an option the app lists.
"""

from __future__ import annotations

from typing import Any

import pytest
from drawn import sent_charts

from posenc_ui import catalog
from posenc_ui.frame import widget_key
from posenc_ui.lessons import VIEWS
from posenc_ui.state import ChoiceParam, FollowingChoiceParam, defaults

#: The AppTest accessor of each widget kind a choice is drawn with.
ACCESSOR = {
    "selectbox": "selectbox",
    "radio": "radio",
    "segmented": "segmented_control",
    "select_slider": "select_slider",
}
CHOICES = [
    (view, param)
    for view in VIEWS
    for param in view.params
    if isinstance(param, ChoiceParam | FollowingChoiceParam) and param.widget in ACCESSOR
]


def options(view, param) -> tuple[Any, ...]:
    r"""What the widget offers at the page's defaults (a following choice: what the defaults allow)."""
    if isinstance(param, FollowingChoiceParam):
        return param.options_of(defaults(view.params))
    return param.options


def refusals(at) -> list[str]:
    r"""Every red box the run drew but a live check's ✗ (a measured result the page reports, e.g. a lab run that did
    not learn its task, is content, not an error), and every traceback."""
    boxes = [box.value for box in at.error]
    shown = [box for box in boxes if not all(line.startswith("✗") for line in box.split("\n\n"))]
    return shown + [str(exc.value) for exc in at.exception]


def test_the_walk_covers_every_choice_the_issue_counted() -> None:
    assert sum(len(options(view, param)) for view, param in CHOICES if param.widget in ("selectbox", "radio")) >= 50


@pytest.mark.parametrize(("view", "param"), CHOICES, ids=lambda x: getattr(x, "page_id", getattr(x, "name", "")))
def test_every_option_picked_from_the_defaults_draws_without_an_error(view, param, open_page) -> None:
    script = catalog.BY_ID[view.page_id].script
    at = open_page(script, lang="en")
    assert not refusals(at), f"{view.page_id} at its defaults: {refusals(at)}"
    charts = len(sent_charts(at))
    key = widget_key(view.page_id, param.name)
    walked = 0
    for option in options(view, param):
        widgets = getattr(at, ACCESSOR[param.widget])
        found = [w for w in widgets if w.key == key]
        if not found:  # drawn only under other settings: its link is still opened below
            break
        found[0].set_value(option).run()
        walked += 1
        assert not refusals(at), f"{view.page_id}: {param.name} = {option!r}: {refusals(at)}"
        assert len(sent_charts(at)) >= charts, f"{view.page_id}: {param.name} = {option!r} drew fewer figures"
    assert walked or param.name in ("pasted_layer",), f"{view.page_id}: {param.name} was not drawn at the defaults"


@pytest.mark.parametrize(("view", "param"), CHOICES, ids=lambda x: getattr(x, "page_id", getattr(x, "name", "")))
def test_a_shared_link_to_every_option_opens_with_its_figures(view, param, open_page) -> None:
    script = catalog.BY_ID[view.page_id].script
    for option in options(view, param):
        at = open_page(script, lang="zh", params={param.name: param.encode(option)})
        assert not refusals(at), f"{view.page_id}?{param.name}={option}: {refusals(at)}"
        assert sent_charts(at), f"{view.page_id}?{param.name}={option} opened with no figure"
