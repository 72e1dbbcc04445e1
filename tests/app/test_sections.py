r"""Sections: a widget drawn in a section reruns only that section, so nothing outside it may read the widget.

Moving a slider of a section reruns the section alone (a Streamlit fragment): in the browser bench, RoPE's grid
slider went from 371 ms and 83 KB a move to 156–216 ms and 7 KB. That is right only while nothing outside the
section reads the slider's parameter. The frame checks it on every such rerun against what the page's last full
run read, and reruns the whole page when it fails, so a page that breaks the rule stays correct and is merely slow.
These tests keep every page fast: at the defaults, in both languages, no section's widget is read elsewhere. They
also check what makes that true: every recipe says what it reads, and every live check is drawn in the page, not
only in its folded panel.
"""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

import pytest

from posenc_core import PosEncError
from posenc_ui import catalog
from posenc_ui.frame import page as page_module
from posenc_ui.frame.page import SECTIONS, Page
from posenc_ui.i18n import t
from posenc_ui.lesson import Check, reads
from posenc_ui.lessons import VIEWS
from posenc_ui.state import defaults

#: The sliders a student moves most, and the section each must live in (so that moving it reruns only that).
LOCAL = {
    "sinusoidal": {"offset": "h_shift", "dims": "h_waves", "length": "lesson", "dim": "lesson", "base": "lesson"},
    "learned": {
        "position": "h_wall",
        "model": "h_trained",
        "token": "h_onehot",
        "max_length": "lesson",
        "dim": "lesson",
    },
    "relative": {"num_buckets": "h_t5", "t5_length": "t5_matrix", "cross_length": "h_why", "key_length": "lesson"},
    "rope": {
        "dim": "lesson",
        "base": "lesson",
        "seed": "lesson",
        "m": "clocks",
        "n": "clocks",
        "trained": "mismatch",
        "lookback": "mismatch",
        "tolerance": "h_periods",
        "grid": "h_beyond",
        "same_vector": "h_decay",
    },
    "extension": {"window": "h_rerope", "config": "h_paste", "factor": "lesson", "model": "lesson"},
    "alibi": {"threshold": "weights", "seed": "weights", "length": "lesson", "n_heads": "lesson"},
    "first": {"bits": "h_binary", "length": "lesson"},
    "why": {"pair": "attention", "dim": "attention"},
    "compare": {"length": "compare"},
    "today": {"frames": "ids", "layout": "layouts", "span": "layouts", "dt": "grid", "seed": "h_nope"},
}


def nested(placed: dict[str, str], read: dict[str | None, set[str]]) -> Page:
    r"""A page's section bookkeeping alone: the lesson section holds clocks, the page's own flow holds the lesson."""
    page = Page.__new__(Page)
    page._placed, page._read, page._parent = placed, read, {"lesson": None, "clocks": "lesson"}
    return page


def test_a_section_counts_the_sections_inside_it_as_its_own_and_the_one_around_it_as_elsewhere() -> None:
    placed = {"dim": "lesson", "m": "clocks"}
    inside = nested(placed, {None: set(), "lesson": {"dim"}, "clocks": {"dim", "m"}})
    assert inside.runs_alone("lesson") and inside.runs_alone("clocks")  # clocks reads d, and reruns with the lesson
    around = nested(placed, {None: set(), "lesson": {"dim", "m"}, "clocks": {"m"}})
    assert around.runs_alone("lesson") and not around.runs_alone("clocks")  # the lesson reads m: m reruns it all
    outside = nested(placed, {None: {"dim"}, "lesson": set(), "clocks": {"m"}})
    assert not outside.runs_alone("lesson") and outside.runs_alone("clocks")
    assert outside.section_map() == {
        "lesson": {"widgets": ["dim"], "read_elsewhere": ["dim"]},
        "clocks": {"widgets": ["m"], "read_elsewhere": []},
    }


def sections_of(open_page, view, lang: str, **state) -> dict[str, dict[str, list[str]]]:
    at = open_page(catalog.BY_ID[view.page_id].script, lang=lang)
    if state:
        for key, value in state.items():
            at.session_state[key] = value
        at.run()
    assert not at.exception
    return at.session_state[SECTIONS]


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.page_id)
def test_no_section_widget_is_read_outside_its_section(open_page, view, lang: str) -> None:
    sections = sections_of(open_page, view, lang)
    assert {name: s["read_elsewhere"] for name, s in sections.items() if s["read_elsewhere"]} == {}
    placed = {widget: name for name, s in sections.items() for widget in s["widgets"]}
    assert {w: placed.get(w) for w in LOCAL.get(view.page_id, {})} == LOCAL.get(view.page_id, {})


@pytest.mark.parametrize(
    ("page_id", "panel"),
    [("rope", "share.rope.box"), ("sinusoidal", "export.sinusoidal.box")],
)
def test_an_open_panel_makes_its_sections_rerun_the_whole_page(open_page, page_id: str, panel: str) -> None:
    r"""The link and the downloads carry every value: while they are open, no section can rerun alone."""
    view = catalog.BY_ID[page_id].view
    sections = sections_of(open_page, view, "en", **{panel: True})
    assert sections and all(s["read_elsewhere"] == s["widgets"] for s in sections.values())


def test_the_open_formula_panel_reads_no_value(open_page) -> None:
    r"""The formula, paper and source show no slider's value (the live checks are in the page): sections stay fast."""
    sections = sections_of(open_page, catalog.BY_ID["rope"].view, "en", **{"explain.rope": True})
    assert sections and not any(s["read_elsewhere"] for s in sections.values())


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.page_id)
def test_every_recipe_says_what_it_reads(view) -> None:
    r"""A recipe without ``uses`` counts as reading every parameter: any section drawing it would never run alone."""
    undeclared = [name for name, fn in {**view.figures, **view.checks}.items() if not hasattr(fn, "uses")]
    assert undeclared == []
    names = {p.name for p in view.params}
    assert all(set(fn.uses) <= names for fn in {**view.figures, **view.checks}.values())


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.page_id)
def test_every_live_check_is_drawn_in_the_page_not_only_in_its_folded_panel(open_page, view) -> None:
    at = open_page(catalog.BY_ID[view.page_id].script, lang="en")
    assert not at.exception
    drawn = "\n".join(box.value for box in [*at.success, *at.error])
    values = defaults(view.params, "en")
    for name, recipe in view.checks.items():
        check = recipe(values)
        words = {key: t(word, "en") for key, word in check.fmt_keys.items()}
        text = t(check.key, "en", residual=f"{check.residual:.1e}", **check.fmt, **words)
        assert text in drawn, name


def test_consecutive_checks_share_one_box_per_run_that_holds_or_fails_alike(monkeypatch) -> None:
    r"""``page.checks``: one element for a run of passing checks (each element costs every rerun), a new box where a
    check fails, the same claim shown once, and a refused check skipped in its place."""
    boxes: list[list[str]] = []
    monkeypatch.setattr(
        page_module, "render_checks", lambda checks, lang: checks and boxes.append([c.key for c in checks])
    )
    monkeypatch.setattr(page_module.st, "caption", lambda text: boxes.append(["skipped"]))
    monkeypatch.setattr(page_module, "t", lambda key, lang, **fmt: key)

    def claim(residual: float, key: str) -> Callable[[dict], Check]:
        return reads()(lambda values: Check(key, residual))

    def refused(values: dict) -> Check:
        raise PosEncError("refused")

    page = Page.__new__(Page)
    page.view = SimpleNamespace(
        page_id="test",
        params=[],
        checks={
            "a": claim(0.0, "a"),
            "b": claim(0.0, "b"),
            "again": claim(0.0, "a"),
            "bad": claim(1.0, "bad"),
            "c": claim(0.0, "c"),
            "refused": reads()(refused),
        },
    )
    page.lang, page._values, page._section, page._shown, page._read = "en", {}, None, [], {None: set()}
    shown = page.checks("a", "b", "again", "bad", "c", "refused", "b")
    assert boxes == [["a", "b"], ["bad"], ["c"], ["skipped"]]
    assert [check and check.key for check in shown] == ["a", "b", "a", "bad", "c", None, "b"]
    with pytest.raises(TypeError):
        page.text("a", "b", n=1)  # placeholders would read the other strings' LaTeX braces
