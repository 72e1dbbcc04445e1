r"""Every page in both languages under AppTest: runs clean, sliders at their extremes, URL state, language switch."""

from __future__ import annotations

import gc
import json

import pytest
from drawn import sent_charts, shown_checks
from threadpoolctl import threadpool_info

from posenc_ui import catalog
from posenc_ui.frame import LANG_WIDGET, Page
from posenc_ui.frame.process import YOUNG_THRESHOLD
from posenc_ui.i18n import t
from posenc_ui.lessons import VIEWS

LANGS = ["zh", "en"]
PAGES = list(catalog.PAGES)
PAGE_SCRIPTS = [page.script for page in PAGES]
ALL_SCRIPTS = [None, *PAGE_SCRIPTS]


def assert_clean(at) -> None:
    r"""No exception element and no Python traceback in the run."""
    assert not at.exception, [e.value for e in at.exception]


def page_title(script: str | None, lang: str) -> str:
    if script is None:
        return t("home.title", lang)
    page = next(p for p in catalog.PAGES if p.script == script)
    return t(f"page.{page.id}.title", lang)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("script", ALL_SCRIPTS)
def test_page_runs_clean_in_each_language(open_page, script: str | None, lang: str) -> None:
    at = open_page(script, lang=lang)
    assert_clean(at)
    assert at.title[0].value == page_title(script, lang)
    assert at.query_params["lang"] == lang


@pytest.mark.parametrize("script", PAGE_SCRIPTS)
def test_every_slider_at_min_and_max(open_page, script: str) -> None:
    at = open_page(script, lang="en")
    for i in range(len(at.slider)):
        for end in ("min", "max"):
            slider = at.slider[i]
            slider.set_value(getattr(slider, end)).run()
            assert_clean(at)
    assert not at.warning  # moving sliders never produces a URL notice


@pytest.mark.parametrize("script", PAGE_SCRIPTS)
def test_all_sliders_at_max_together(open_page, script: str) -> None:
    at = open_page(script, lang="zh")
    for slider in at.slider:
        slider.set_value(slider.max)
    at.run()
    assert_clean(at)


@pytest.mark.parametrize("script", PAGE_SCRIPTS)
def test_garbage_query_params_give_a_notice_not_a_traceback(open_page, script: str) -> None:
    page = next(p for p in PAGES if p.script == script)
    view = next(v for v in VIEWS if v.page_id == page.id)
    garbage = {param.name: "🙃garbage" for param in view.params}
    at = open_page(script, lang="en", params=garbage)
    assert_clean(at)
    assert len(at.warning) == len(view.params)
    assert all("garbage" in w.value for w in at.warning)


def test_out_of_range_values_are_clamped_with_a_notice(open_page) -> None:
    at = open_page("pages/3_Sinusoidal.py", lang="en", params={"length": "99999", "dim": "7", "base": "12345"})
    assert_clean(at)
    assert at.slider(key="sinusoidal.length").value == 4096
    assert at.slider(key="sinusoidal.dim").value == 8  # snapped to the step-4 grid
    assert at.select_slider(key="sinusoidal.base").value == 10000.0
    assert len(at.warning) == 3
    assert at.query_params["length"] == "4096"


def test_deep_link_restores_state(open_page) -> None:
    params = {"pair": "tiantian", "encoding": "rope", "dim": "32", "seed": "3"}
    at = open_page("pages/1_Why_position.py", lang="zh", params=params)
    assert_clean(at)
    assert not at.warning
    assert at.segmented_control(key="why.encoding").value == "rope"
    assert at.radio(key="why.pair").value == "tiantian"
    assert at.slider(key="why.dim").value == 32
    assert dict(at.query_params) == {"lang": "zh", **params}


def test_slider_moves_are_written_to_the_url(open_page) -> None:
    at = open_page("pages/2_First_attempts.py", lang="en")
    at.slider(key="first.bits").set_value(7).run()
    assert at.query_params["bits"] == "7"


def test_language_switch_keeps_page_and_state(open_page) -> None:
    at = open_page("pages/3_Sinusoidal.py", lang="en")
    at.slider(key="sinusoidal.dim").set_value(256).run()
    at.segmented_control(key=LANG_WIDGET).set_value("zh").run()
    assert_clean(at)
    assert at.title[0].value == t("page.sinusoidal.title", "zh")
    assert at.slider(key="sinusoidal.dim").value == 256
    assert at.query_params["lang"] == "zh" and at.query_params["dim"] == "256"


@pytest.mark.parametrize(
    ("locale", "expected"), [("zh-CN", "zh"), ("zh-TW", "zh"), ("en-GB", "en"), ("de-DE", "en"), (None, "en")]
)
def test_language_follows_browser_locale_without_lang_param(open_page, locale, expected) -> None:
    at = open_page(None, context={"locale": locale} if locale else {})
    assert at.title[0].value == t("home.title", expected)


@pytest.mark.parametrize("script", [None, "pages/6_RoPE.py"])
def test_an_unknown_language_falls_back_with_a_notice(open_page, script: str | None) -> None:
    at = open_page(script, params={"lang": "xx<b>"}, context={"locale": "zh-CN"})
    assert_clean(at)
    assert at.title[0].value == page_title(script, "zh")  # the browser's language, as with no lang at all
    assert any("lang=xx<b>" in box.value for box in at.warning)  # named, as code: never rendered as markup
    assert at.query_params["lang"] == "zh"


def test_lang_param_beats_browser_locale(open_page) -> None:
    at = open_page(None, lang="en", context={"locale": "zh-CN"})
    assert at.title[0].value == t("home.title", "en")


@pytest.mark.parametrize("script", PAGE_SCRIPTS)
def test_embed_mode_has_no_sidebar_text_or_explanations(open_page, script: str) -> None:
    at = open_page(script, lang="en", context={"is_embedded": True})
    assert_clean(at)
    assert not at.sidebar.children  # an empty sidebar is not drawn at all
    assert sent_charts(at)  # the figures and their controls are still there
    assert not at.latex and not at.download_button  # no explain panel, no export buttons


@pytest.mark.parametrize("script", PAGE_SCRIPTS)
def test_download_panel_offers_every_figure_drawn_in_every_format(open_page, script: str) -> None:
    at = open_page(script, lang="zh")
    page_id = next(p.id for p in PAGES if p.script == script)
    assert not [box for box in at.selectbox if box.key == f"export.{page_id}.figure"]
    at.session_state[f"export.{page_id}.box"] = True  # the panel is folded, its content drawn once opened
    at.run()
    choose = at.selectbox(key=f"export.{page_id}.figure")
    assert len(choose.options) == len(sent_charts(at))
    assert all(option and "<" not in option for option in choose.options)  # plain titles, no plotly markup
    choose.select_index(len(choose.options) - 1).run()
    at.button_group(key=f"export.{page_id}.format").set_value("svg").run()
    assert_clean(at)
    (button,) = at.download_button
    assert button.label == t("export.download", "zh", format=t("export.svg", "zh"))


def test_the_first_page_freezes_the_long_lived_heap_and_keeps_numpys_blas_on_one_thread(open_page) -> None:
    open_page("pages/1_Why_position.py", lang="en")
    assert gc.get_freeze_count() > 10_000  # modules, validators, the runtime: out of every full collection
    assert gc.get_threshold()[0] == YOUNG_THRESHOLD > 700  # a rerun's cyclic garbage dies young
    (blas,) = [lib for lib in threadpool_info() if lib["user_api"] == "blas"]  # numpy's OpenBLAS
    assert blas["num_threads"] == 1


def test_a_page_left_behind_keeps_nothing_of_itself_alive(open_page) -> None:
    r"""Streamlit keeps every widget's ``format_func`` for the whole session: none may hold the page (its figures).

    A closure over the page once kept every figure of every page a student had opened, for each student. A page's
    sections (Streamlit fragments) do hold it, until the next full run of another page drops them. Pages of earlier
    tests' apps are not this session's: AppTest may keep its last script context alive.
    """

    def rope_pages() -> set[int]:
        gc.collect()
        return {id(obj) for obj in gc.get_objects() if type(obj) is Page and obj.view.page_id == "rope"}

    earlier = rope_pages()
    at = open_page("pages/6_RoPE.py", lang="en")
    assert rope_pages() - earlier  # the page's sections hold it while it is shown
    at.switch_page("pages/1_Why_position.py")
    at.run()
    assert_clean(at)
    assert not rope_pages() - earlier


@pytest.mark.parametrize("script", PAGE_SCRIPTS)
def test_each_page_has_two_figures_formula_source_and_passing_checks(open_page, script: str) -> None:
    at = open_page(script, lang="en")
    assert len(sent_charts(at)) >= 2
    assert not at.latex  # the formula panel is folded
    at.session_state[f"explain.{next(p.id for p in PAGES if p.script == script)}"] = True
    at.run()
    assert at.latex and any("def " in code.value for code in at.code)
    checks = shown_checks(at)
    assert checks and all(check.startswith("✓") for check in checks)


def test_learned_page_shows_the_wall_as_a_lesson_not_a_crash(open_page) -> None:
    at = open_page("pages/4_Learned_absolute.py", lang="en", params={"max_length": "128", "position": "128"})
    assert_clean(at)
    assert any("Position 128 has no row" in box.value for box in at.info)  # a lesson callout, not a red error
    assert not at.error
    at.slider(key="learned.position").set_value(127).run()
    assert not [box for box in at.info if "has no row" in box.value]
    at = open_page("pages/4_Learned_absolute.py", lang="zh", params={"max_length": "128", "position": "128"})
    assert any("位置 128 没有对应的行" in box.value for box in at.info)  # in the reader's language


def test_binary_overflow_keeps_last_good_figure(open_page) -> None:
    at = open_page("pages/2_First_attempts.py", lang="en")
    charts = len(sent_charts(at))
    at.slider(key="first.length").set_value(100).run()  # 100 positions need 7 bits; 4 are set
    assert_clean(at)
    assert any("dim = 4 bits" in e.value for e in at.error)
    assert len(sent_charts(at)) == charts  # the binary figure from before is still shown
    at.toggle(key="first.wrap").set_value(True).run()
    assert not at.error


def test_navigation_links_every_page_in_the_chosen_language(open_page) -> None:
    at = open_page(None, lang="zh")
    labels = [link.proto.label for link in at.sidebar.get("page_link")]
    for page in PAGES:
        assert any(t(f"page.{page.id}.title", "zh") in label for label in labels)


def test_the_paste_box_keeps_its_value_and_refuses_in_the_readers_language(open_page) -> None:
    r"""``page.paste_box``: what the core refuses in it is shown with the frame's words in the reader's language (the
    core's message as code); the text survives other widgets' reruns, and a config survives a trip to another page."""
    at = open_page("pages/7_Context_extension.py", lang="zh")
    box = at.text_area(key="extension.config")
    assert box.label == t("extension.config", "zh") and not box.max_chars  # a long paste is refused, not dropped
    box.set_value("x" * 2_000_000).run()  # 2 MB: the parser says how long it is and what fits
    assert_clean(at)
    assert any("2,000,000" in e.value and "65,536" in e.value and "字符" in e.value for e in at.error)
    broken = '{"rope_theta": 10000, "head_dim": 128,'
    at.text_area(key="extension.config").set_value(broken).run()
    assert_clean(at)
    assert any(e.value.startswith(t("frame.core_refused", "zh", message="")) for e in at.error)
    assert any("不是合法的 JSON" in e.value for e in at.error)
    at.slider(key="extension.beta_fast").set_value(16).run()
    assert at.text_area(key="extension.config").value == broken
    pasted = json.dumps({"head_dim": 64, "max_position_embeddings": 2048, "rope_theta": 20000.0}, indent=2)
    at.text_area(key="extension.config").set_value(pasted).run()
    at.switch_page("pages/1_Why_position.py").run()
    at.query_params.clear()
    at.switch_page("pages/7_Context_extension.py").run()
    assert_clean(at)
    assert json.loads(at.text_area(key="extension.config").value) == json.loads(pasted)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_notice_names_the_value_used_as_its_control_shows_it_not_its_internal_id(open_page, lang: str) -> None:
    from posenc_ui.i18n import t

    at = open_page("pages/9_Todays_models.py", lang=lang, params={"model": "nonsense"})
    (notice,) = at.warning
    assert t("today.model.llama4_scout", lang) in notice.value and "llama4_scout" not in notice.value
