r"""Lecturer features on every page (issue 14): the key takeaway, presenter mode, the single-figure embed, reset.

Presenter mode (``?present=true``) and the single-figure embed (``?embed=true&figure=…``) show one figure of the
view with exactly the controls its recipe reads (``recipe.uses``); the reset button puts every widget back to its
default and the page's values leave the URL.
"""

from __future__ import annotations

import pytest
from drawn import sent_charts

from posenc_ui import catalog
from posenc_ui.frame import widget_key
from posenc_ui.frame.present import figure_controls
from posenc_ui.i18n import t
from posenc_ui.lessons import VIEWS
from posenc_ui.state import BoolParam, ChoiceParam, IntParam, defaults

LANGS = ["zh", "en"]
PAGES = list(catalog.PAGES)
WIDGETS = ("slider", "select_slider", "toggle", "multiselect", "button_group", "radio", "text_area", "selectbox")


def page_widgets(at, page_id: str) -> set[str]:
    r"""The names of the page's parameters that have a widget on screen."""
    keys = {w.key for kind in WIDGETS for w in at.get(kind) if w.key and w.key.startswith(f"{page_id}.")}
    return {key.split(".", 1)[1] for key in keys}


def assert_clean(at) -> None:
    assert not at.exception, [e.value for e in at.exception]


def counter(at) -> str:
    return next(m.value for m in at.markdown if " / " in m.value and m.value.replace(" / ", "").isdigit())


# --- key takeaway -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.id)
def test_every_page_shows_its_key_takeaway_under_the_title(open_page, page, lang: str) -> None:
    at = open_page(page.script, lang=lang)
    assert_clean(at)
    takeaway = t(f"{page.id}.key_takeaway", lang)
    assert takeaway in at.info[0].value  # the first callout, right under the title
    assert len(takeaway) <= (190 if lang == "en" else 100)  # two lines at most on a laptop


def test_home_has_no_takeaway(open_page) -> None:
    at = open_page(None, lang="en")
    assert not any(t("frame.takeaway", "en") in box.value for box in at.info)


# --- presenter mode -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.id)
def test_presenter_shows_one_figure_with_its_controls_and_the_takeaway(open_page, page) -> None:
    at = open_page(page.script, lang="zh", params={"present": "true"})
    assert_clean(at)
    first = next(iter(page.view.figures))
    assert len(sent_charts(at)) == 1
    assert page_widgets(at, page.id) == set(figure_controls(page.view, first))
    assert t(f"{page.id}.key_takeaway", "zh") in at.info[0].value
    assert not at.latex and not at.download_button  # explanations and panels are folded away
    assert not any(t(f"{page.id}.intro", "zh")[:30] in m.value for m in at.markdown)
    assert counter(at) == f"1 / {len(page.view.figures)}"
    assert dict(at.query_params) == {"lang": "zh", "present": "true", "figure": first}


def _clock_rows(chart: dict) -> int:
    r"""Rows of RoPE's clocks: each clock's label ("i = …") sits above its centre."""
    return len({note["y"] for note in chart["figure"]["layout"]["annotations"] if note["text"].startswith("i = ")})


@pytest.mark.parametrize(
    ("params", "context"),
    [({"present": "true"}, None), ({"embed": "true", "figure": "clocks"}, {"is_embedded": True})],
    ids=["present", "embed"],
)
def test_a_wide_short_canvas_draws_the_three_clocks_in_one_row(open_page, params: dict, context) -> None:
    r"""At 470 px tall (presenter mode) two rows of clocks left each ~65 px wide on a 1280 × 720 projector; one row
    doubles that. The page itself keeps two a row, which a phone needs."""
    (wide,) = sent_charts(open_page("pages/6_RoPE.py", lang="en", params=params, context=context))
    page = sent_charts(open_page("pages/6_RoPE.py", lang="en"))[0]
    assert (_clock_rows(wide), _clock_rows(page)) == (1, 2)  # the default pairs: 0, 16 and 63
    assert len(wide["figure"]["frames"]) == len(page["figure"]["frames"]) > 1  # the animation comes along


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.id)
def test_presenter_steps_forward_and_back_and_stops_at_the_ends(open_page, page) -> None:
    names = list(page.view.figures)
    at = open_page(page.script, lang="en", params={"present": "true"})
    assert at.button(key="present_prev").disabled
    at.button(key="present_next").click().run()
    assert_clean(at)
    assert at.query_params["figure"] == names[1] and counter(at) == f"2 / {len(names)}"
    assert len(sent_charts(at)) == 1
    assert page_widgets(at, page.id) == set(figure_controls(page.view, names[1]))
    at.button(key="present_prev").click().run()
    assert at.query_params["figure"] == names[0] and counter(at) == f"1 / {len(names)}"
    # a reload of the last figure's link shows the last figure; ▶ stops there and the next page is offered
    last = open_page(page.script, lang="en", params={"present": "true", "figure": names[-1]})
    assert_clean(last)
    assert counter(last) == f"{len(names)} / {len(names)}"
    assert last.button(key="present_next").disabled and not last.button(key="present_prev").disabled
    assert page_widgets(last, page.id) == set(figure_controls(page.view, names[-1]))


def test_presenter_with_an_unknown_step_starts_at_the_first_figure(open_page) -> None:
    at = open_page("pages/6_RoPE.py", lang="en", params={"present": "true", "figure": "nope"})
    assert_clean(at)
    assert at.query_params["figure"] == "clocks" and len(sent_charts(at)) == 1


def test_presenter_keeps_widget_changes_in_the_url(open_page) -> None:
    at = open_page("pages/3_Sinusoidal.py", lang="en", params={"present": "true"})
    at.slider(key="sinusoidal.dim").set_value(256).run()
    at.button(key="present_next").click().run()
    assert_clean(at)
    assert at.query_params["dim"] == "256" and at.query_params["present"] == "true"
    assert at.session_state[widget_key("sinusoidal", "dim")] == 256


# --- single-figure embed ------------------------------------------------------------------------------------------

CASES = [(page, name) for page in PAGES for name in dict.fromkeys([page.preview, list(page.view.figures)[-1]])]


@pytest.mark.parametrize(("page", "name"), CASES, ids=lambda c: getattr(c, "id", c))
def test_single_figure_embed_shows_that_chart_and_only_its_controls(open_page, page, name: str) -> None:
    at = open_page(page.script, lang="en", params={"figure": name}, context={"is_embedded": True})
    assert_clean(at)
    assert len(sent_charts(at)) == 1
    assert sent_charts(at)[0]["figure"]["data"]  # drawn, not a refusal
    assert page_widgets(at, page.id) == set(figure_controls(page.view, name))
    assert not at.title and not at.subheader and not at.info and not at.warning  # no other text
    assert not at.sidebar.children
    assert at.query_params["figure"] == name


@pytest.mark.parametrize("lang", LANGS)
def test_unknown_embedded_figure_falls_back_to_the_whole_page_with_a_notice(open_page, lang: str) -> None:
    at = open_page("pages/8_ALiBi.py", lang=lang, params={"figure": "<b>nope"}, context={"is_embedded": True})
    assert_clean(at)
    (notice,) = at.warning
    assert notice.value.startswith(t("present.unknown_figure", lang, figure="X").split("X")[0])
    assert "`" + "by_position" not in notice.value and "bias_heatmap" not in notice.value  # no internal ids
    assert "` figure=<b>nope `" in notice.value  # shown as code, never as markup
    assert len(sent_charts(at)) > 1


# --- reset --------------------------------------------------------------------------------------------------------


def changed_value(param, state):
    r"""A valid value of ``param`` other than its default (``None`` when it has no other)."""
    default = state[param.name]
    if isinstance(param, IntParam):
        other = param.clamp(default + param.step, state)
        return other if other != default else param.clamp(default - param.step, state)
    if isinstance(param, BoolParam):
        return not default
    if isinstance(param, ChoiceParam):
        return next(o for o in param.options if o != default)
    return None


@pytest.mark.parametrize("view", VIEWS, ids=lambda v: v.page_id)
def test_reset_restores_every_default_and_clears_the_url(open_page, view) -> None:
    if view.page_id not in catalog.BY_ID:
        pytest.skip("the home page has no widgets")
    start = defaults(view.params, "zh")
    changed = {p.name: changed_value(p, start) for p in view.params}
    params = {p.name: p.encode(v) for p in view.params if (v := changed[p.name]) not in (None, start[p.name])}
    params = dict(list(params.items())[:3])
    at = open_page(catalog.BY_ID[view.page_id].script, lang="zh", params=params)
    assert_clean(at)
    assert set(params) <= set(at.query_params)
    reset = at.button(key="reset")
    assert reset.label == t("frame.reset", "zh")
    reset.click().run()
    assert_clean(at)
    assert dict(at.query_params) == {"lang": "zh"}
    for param in view.params:
        value = at.session_state[widget_key(view.page_id, param.name)]
        assert (tuple(value) if isinstance(value, list) else value) == start[param.name], param.name


def test_reset_in_presenter_mode_keeps_the_mode_and_the_step(open_page) -> None:
    at = open_page("pages/8_ALiBi.py", lang="en", params={"present": "true", "figure": "bias", "n_heads": "16"})
    at.button(key="reset").click().run()
    assert_clean(at)
    assert dict(at.query_params) == {"lang": "en", "present": "true", "figure": "bias"}
    assert at.slider(key="alibi.n_heads").value == 8


# --- share box ----------------------------------------------------------------------------------------------------


def test_share_box_offers_presenter_link_and_one_embed_per_figure(open_page) -> None:
    at = open_page("pages/8_ALiBi.py", lang="en")
    at.session_state["share.alibi.box"] = True  # folded until opened
    at.run()
    choose = at.selectbox(key="share.alibi.figure")
    assert len(choose.options) == 1 + len(catalog.BY_ID["alibi"].view.figures)
    at.toggle(key="share.alibi.present").set_value(True).run()
    choose.select_index(2).run()
    codes = [c.value for c in at.code]
    assert any("present=true" in c and "embed" not in c for c in codes)
    assert any("<iframe" in c and "figure=bias" in c and "embed=true" in c for c in codes)


def test_presenter_language_switch_keeps_mode_and_step(open_page) -> None:
    at = open_page("pages/8_ALiBi.py", lang="en", params={"present": "true", "figure": "curves"})
    at.sidebar.segmented_control[0].set_value("zh").run()
    assert_clean(at)
    assert dict(at.query_params) == {"lang": "zh", "present": "true", "figure": "curves"}
    assert t("alibi.key_takeaway", "zh") in at.info[0].value


def test_on_a_phone_the_takeaway_follows_the_first_figure(open_page, monkeypatch) -> None:
    r"""A phone shows the first figure in its first screen: the takeaway waits until that figure is drawn."""
    from posenc_ui.frame import page as page_module

    def order(at) -> list[str]:
        kinds = []
        for node in at.main.children.values():
            stack = [node]
            while stack:
                item = stack.pop(0)
                if getattr(item, "type", "") == "alert" or type(item).__name__ == "Info":
                    kinds.append("info")
                elif type(item).__name__ == "UnknownElement" and getattr(item, "proto", None) is not None:
                    kinds.append("chart")
                stack[:0] = list(getattr(item, "children", {}).values())
        return kinds

    desktop = open_page("pages/3_Sinusoidal.py", lang="en")
    assert order(desktop).index("info") < order(desktop).index("chart")
    monkeypatch.setattr(page_module, "is_touch", lambda user_agent: True)
    phone = open_page("pages/3_Sinusoidal.py", lang="en")
    assert order(phone).index("chart") < order(phone).index("info")
    assert t("sinusoidal.key_takeaway", "en") in [box.value.split("** ", 1)[-1] for box in phone.info]
