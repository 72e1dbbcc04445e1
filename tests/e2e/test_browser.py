r"""The whole app in real Chromium: pages load cleanly, sliders re-render, links restore state, embeds, downloads."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
from conftest import full_screenshot, goto, wait_rendered
from playwright.sync_api import Page, expect

from posenc_ui import catalog
from posenc_ui.i18n import t

pytestmark = pytest.mark.e2e

PAGES = [(page.url_path, page.id) for page in catalog.PAGES]
CJK = re.compile(r"[\u4e00-\u9fff]")
MIN_CHARTS = 2
#: Display formulas wider than their column at the current width (KaTeX clips them: the end is lost, not wrapped);
#: a few pixels of KaTeX's own padding are not a clipped formula.
CLIPPED_FORMULAS = """() => [...document.querySelectorAll('.katex-display')]
    .filter(e => e.scrollWidth > e.clientWidth + 4).map(e => e.textContent.slice(0, 80))"""


def query(page: Page) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(page.url).query).items()}


@pytest.mark.parametrize("lang", ["zh", "en"])
@pytest.mark.parametrize(("path", "page_id"), [("", "home"), *PAGES])
def test_page_loads_without_console_errors(page: Page, app_url: str, console_errors, path, page_id, lang) -> None:
    page.set_viewport_size({"width": 1280, "height": 900})
    goto(page, f"{app_url}/{path}?lang={lang}", charts=0 if page_id == "home" else MIN_CHARTS)
    title = t("home.title" if page_id == "home" else f"page.{page_id}.title", lang)
    expect(page.locator("h1").first).to_have_text(title)
    full_screenshot(page, f"{page_id}-{lang}-desktop")
    page.set_viewport_size({"width": 390, "height": 844})
    full_screenshot(page, f"{page_id}-{lang}-phone")
    assert not console_errors
    assert not page.evaluate(CLIPPED_FORMULAS), "formulas wider than a phone screen are cut off"
    if lang == "zh":
        assert CJK.search(page.locator("[data-testid=stMain]").inner_text())


def test_slider_move_rerenders_and_updates_the_url(page: Page, app_url: str, console_errors) -> None:
    goto(page, f"{app_url}/Sinusoidal?lang=en", charts=MIN_CHARTS)
    title = page.locator(".gtitle").first
    expect(title).to_contain_text("d = 128")
    slider = page.get_by_role("slider", name=t("sinusoidal.dim", "en"))
    slider.focus()
    slider.press("ArrowRight")
    expect(title).to_contain_text("d = 132", timeout=15_000)
    page.wait_for_function("() => location.search.includes('dim=132')")
    assert not console_errors


def test_deep_link_restores_state(page: Page, app_url: str) -> None:
    goto(page, f"{app_url}/Sinusoidal?lang=zh&length=512&dim=256&base=1000&offset=7", charts=MIN_CHARTS)
    expect(page.locator(".gtitle").first).to_contain_text("L = 512，d = 256，base = 1000")
    expect(page.get_by_role("slider", name=t("sinusoidal.dim", "zh"))).to_have_value("256")
    assert query(page)["offset"] == "7"
    assert not page.locator("[data-testid=stAlert]").filter(has_text="链接").count()


def test_garbage_in_the_link_shows_a_notice(page: Page, app_url: str) -> None:
    goto(page, f"{app_url}/Why_position?lang=en&dim=banana", charts=MIN_CHARTS)
    expect(page.locator("[data-testid=stAlert]").filter(has_text="dim=banana")).to_be_visible()
    assert "dim" not in query(page)  # the default (16) replaced it, and links leave defaults out


def test_embed_mode_has_no_sidebar(page: Page, app_url: str) -> None:
    goto(page, f"{app_url}/Why_position?lang=en&embed=true&encoding=rope", charts=MIN_CHARTS)
    assert page.locator("[data-testid=stSidebar]").count() == 0
    assert page.locator("[data-testid=stDownloadButton]").count() == 0
    assert query(page)["encoding"] == "rope" and query(page)["embed"] == "true"


def test_language_switch_and_navigation_keep_state(page: Page, app_url: str) -> None:
    goto(page, f"{app_url}/First_attempts?lang=en&bits=6", charts=MIN_CHARTS)
    page.locator("[data-testid=stButtonGroup]").first.get_by_text("中文", exact=True).click()
    expect(page.locator("h1").first).to_have_text(t("page.first.title", "zh"))
    page.wait_for_function("() => location.search.includes('lang=zh') && location.search.includes('bits=6')")
    sidebar = page.locator("[data-testid=stSidebar]")
    sidebar.get_by_role("link", name=re.compile(t("page.sinusoidal.title", "zh"))).click()
    expect(page.locator("h1").first).to_have_text(t("page.sinusoidal.title", "zh"))
    page.wait_for_function("() => location.search.includes('lang=zh')")
    sidebar.get_by_role("link", name=re.compile(t("page.first.title", "zh"))).click()
    wait_rendered(page)
    page.wait_for_function("() => location.search.includes('bits=6')")  # the session remembered the page


@pytest.mark.parametrize(("fmt", "signature"), [("html", b"<"), ("png", b"\x89PNG"), ("svg", b"<svg")])
def test_downloads_are_valid_files(page: Page, app_url: str, fmt: str, signature: bytes) -> None:
    r"""The page's download panel: pick the format, press its one button, get a real file of that format."""
    goto(page, f"{app_url}/Why_position?lang=zh", charts=MIN_CHARTS)
    panel = page.locator("[data-testid=stExpander]").filter(has_text=t("export.title", "zh"))
    panel.get_by_text(t("export.title", "zh")).click()
    label = t(f"export.{fmt}", "zh")
    panel.locator("[data-testid=stButtonGroup] button").filter(has_text=label).click()
    button = panel.locator("[data-testid=stDownloadButton]").filter(has_text=t("export.download", "zh", format=label))
    expect(button).to_be_visible()
    with page.expect_download(timeout=60_000) as info:
        button.click()
    assert info.value.suggested_filename == f"posenc-why-attention_a-zh.{fmt}"  # the first figure, by default
    data = open(info.value.path(), "rb").read()
    assert data.lstrip().startswith(signature)
    if fmt == "html":
        assert b"<html" in data[:300].lower() and len(data) > 1_000_000  # plotly.js inlined: works offline
        assert b"Plotly.addFrames" in data and b'"sliders"' in data  # the figure's slider, with no server
    if fmt == "svg":
        assert CJK.search(data.decode("utf-8"))  # Chinese text survives into the export


def test_share_box_link_reopens_the_same_view(page: Page, app_url: str) -> None:
    r"""The link in the share box names this page and its state; opening it restores both (here, in embed form too)."""
    goto(page, f"{app_url}/Sinusoidal?lang=en&length=256&dim=64", charts=MIN_CHARTS)
    share = page.locator("[data-testid=stExpander]").filter(has_text=t("share.title", "en"))
    share.get_by_text(t("share.title", "en")).click()
    codes = share.locator("[data-testid=stCode] code")
    expect(codes.first).to_contain_text("/Sinusoidal?")
    link, snippet = codes.nth(0).inner_text().strip(), codes.nth(1).inner_text()
    assert query_of(link)["dim"] == "64" and query_of(link)["length"] == "256"
    src = re.search(r'src="([^"]+)"', snippet).group(1)
    assert query_of(src)["embed"] == "true"
    goto(page, link, charts=MIN_CHARTS)
    expect(page.get_by_role("slider", name=t("sinusoidal.dim", "en"))).to_have_value("64")


def query_of(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(url).query).items()}


def test_browser_bench_times_a_slider_move(tmp_path, app_url: str) -> None:
    r"""``bench/bench_browser.py`` runs against a live server and sees the move it makes (figures are for people)."""
    import json
    import subprocess
    import sys

    out = tmp_path / "browser.json"
    cmd = [
        sys.executable,
        "bench/bench_browser.py",
        "--url",
        app_url,
        "--pages",
        "First_attempts",  # two sliders: the smoke test of --url (test_bench_smoke.py runs the bench's own server)
        "--moves",
        "1",
        "--json",
        str(out),
    ]
    run = subprocess.run(cmd, cwd=catalog.ROOT, capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stderr[-2000:]
    first = json.loads(out.read_text())["results"]["First_attempts"]
    assert first["first_figure_ms"] > 0 and first["sliders"]
    assert all(s["median_ms"] > 0 and s["kb_per_move"] > 0 for s in first["sliders"].values())


def install_bench_probes(page: Page) -> None:
    r"""``bench/bench_browser.py``'s probes on the page already there, and what is in its window marked."""
    import sys

    sys.path.insert(0, str(catalog.ROOT / "bench"))
    from bench_browser import MARK_IN_VIEW, PROBES

    page.evaluate(PROBES)
    page.evaluate(MARK_IN_VIEW)


#: A move as Streamlit's own ``st.plotly_chart`` makes it (the bare page's chart): the old plot's element leaves the
#: page and is emptied (its teardown), then a new element is drawn in its place.
REPLACE_CHART = """async () => {
  const pause = () => new Promise((ok) => setTimeout(ok, 30));
  const old = document.querySelector('[data-testid="stPlotlyChart"]'), parent = old.parentElement;
  old.remove();
  old.firstElementChild.remove();
  await pause();
  const teardown = performance.now();
  await pause();
  const fresh = Object.assign(document.createElement('div'), {style: 'height: 300px'});
  fresh.dataset.testid = 'stPlotlyChart';
  parent.append(fresh);
  await pause();
  fresh.append(Object.assign(document.createElementNS('http://www.w3.org/2000/svg', 'svg'), {classList: 'main-svg'}));
  await pause();
  return {teardown, drawn: performance.now()};
}"""


def test_browser_bench_times_a_replaced_chart_to_its_new_plot(page: Page) -> None:
    r"""The bench's probe times a move to the new plot drawn in the window, not to the old plot's teardown.

    Streamlit's ``st.plotly_chart`` replaces its element when the figure changes. The bench once kept the old
    element's "in view" mark and missed the new one's, so on some moves of the bare page (the floor of every ratio)
    it stopped the clock at the teardown: ~40 ms instead of ~150 ms in Chromium on the 2-core machine.
    """
    page.set_viewport_size({"width": 800, "height": 600})
    page.set_content(
        '<div><div data-testid="stPlotlyChart" style="height: 300px"><svg class="main-svg"></svg></div></div>'
    )
    install_bench_probes(page)
    times = page.evaluate(REPLACE_CHART)
    probe = page.evaluate("() => ({...__probe})")
    assert times["teardown"] < probe["viewPlot"] == probe["view"] == probe["plot"] <= times["drawn"]


#: A move that changes a number in the text in the window, then (when the browser is idle) a chart below the fold.
TEXT_THEN_CHART_BELOW = """async () => {
  const pause = () => new Promise((ok) => setTimeout(ok, 30));
  document.querySelector('[data-testid="stElementContainer"] p').textContent = 's = 5';
  const text = performance.now();
  await pause();
  document.querySelector('.posenc-chart svg').setAttribute('data-s', '5');
  return {text, chart: performance.now()};
}"""


def test_browser_bench_times_a_move_to_the_last_change_in_the_window(page: Page) -> None:
    r"""A chart below the fold, redrawn later, does not count as what the reader sees; the text in the window does."""
    page.set_viewport_size({"width": 800, "height": 600})
    page.set_content(
        '<div data-testid="stElementContainer"><p>s = 4</p></div>'
        '<div style="height: 2000px"></div><div class="posenc-chart" style="height: 300px"><svg></svg></div>'
    )
    install_bench_probes(page)
    times = page.evaluate(TEXT_THEN_CHART_BELOW)
    probe = page.evaluate("() => ({...__probe})")
    assert times["text"] <= probe["view"] < times["chart"] <= probe["plot"]
    assert probe["viewPlot"] == 0  # no chart in the window changed
