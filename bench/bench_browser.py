r"""What a student feels: slider moves and first loads timed in real Chromium against a real server, on loopback.

    python bench/bench_browser.py [--moves 10] [--pages Sinusoidal,RoPE] [--json out.json]
    python bench/bench_browser.py --charts [--rounds 3] [--moves 6]

It starts ``streamlit run app.py`` (or uses ``--url``) and opens each page in Debian's Chromium at 1280×800. A script
installed before the app loads keeps, in the page's own clock (``performance.now()``, 0 at navigation start):

- the time of the last key press (a capturing ``keydown`` listener);
- the bytes and time of every websocket message from the server (``WebSocket`` wrapped);
- the time of the last DOM change inside a Plotly chart (a ``MutationObserver``): the figure redrawn; and of the
  last change inside a chart or any other element (text, a check, a widget) that was in the window when the move
  began, or that the move added and that was in the window when it first changed. A change inside an element that
  has left the page (``st.plotly_chart`` empties its old plot after drawing a new one in its place) is not counted.

**First load** (after the home page has been opened once, so that the server's start-up is not counted) is the
time from navigation start to the first chart drawn, and to the last chart change before the page is quiet: a deep
link, a new document that loads plotly.js again, and the first visit of that page to the server. After every page,
the reading path is walked again from the home page by the sidebar's links (one document, plotly.js loaded once, the
server's caches warm): **from the sidebar** is the time from the click to the page's first chart drawn.

**A move** focuses one slider and presses an arrow key (→, or ← at its top), waits until the script has run and
nothing has changed for ``--quiet`` ms, and reports the time from the key press to the last change in the window (a
chart redrawn, a number in the text, a check), which is what the student sees (to the last message when nothing
changed); the same to the last change of any chart as well ("all": charts below the fold are redrawn when the
browser is idle, or when they scroll into view); the bytes received; and the time to the server's last message (the
rest is the browser receiving, parsing and drawing). Each slider of the page is moved ``--moves`` times. Medians and
p95 are per slider.

Two faults of this clock, fixed in the fourteenth session, made the earlier ratios read high: the bare page's move
(below) was sometimes stopped at its old plot's teardown, about 40 ms instead of the new plot's 120–200 ms on the
2-core machine, which lowered the floor's median; and a move that redrew no chart in the window was timed to the last
chart redrawn below the fold, which the browser does when it is idle (docs/benchmarks.md, "What a student feels").

**The floor**: a bare Streamlit page of one slider and one small heatmap (``bench/floor_app.py``, its own server) in a
second tab; after every move of an app slider its slider is moved once, so each slider's median is also given as a
ratio to the floor's median over the same minutes, which a busy or slow machine changes far less than the
milliseconds (``--no-floor`` skips it). The goals: each slider's median within 1.5× the floor's and its p95 under
300 ms for the charts in view, and the first figure within 1.5 s. Pages come from the registry
(:data:`posenc_ui.catalog.PAGES`), so a new page is measured without a change here.

**--charts** times ``bench/chart_app.py`` instead: RoPE's twelve figures behind one slider, drawn by
``st.plotly_chart`` and by the app's chart component (:mod:`posenc_ui.frame.chart`), the two ways taking turns in one
run, with the ratio of their median moves.

On a 2-core machine the browser and the server share the cores, as on a student's laptop running the app locally;
run it on a quiet machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from playwright.sync_api import Page, sync_playwright  # noqa: E402
from server import CHROMIUM, CHROMIUM_ARGS, free_port, start_server, stop_server  # noqa: E402

from posenc_ui import catalog  # noqa: E402

#: Per slider: its median move within 1.5× the floor's (issue 46), a p95 under 300 ms; the first figure within 1.5 s.
#: The median is also reported in ms (150 ms was the goal before the floor was measured beside it).
GOALS = {"ratio": 1.5, "median_ms": 150.0, "p95_ms": 300.0, "first_figure_ms": 1500.0}

#: The app's charts, and Streamlit's own (``--charts`` draws both ways).
CHART_SELECTOR = '.posenc-chart, [data-testid="stPlotlyChart"]'
#: Every other element of a page (text, checks, widgets): a change inside one in the window is seen too.
ELEMENT_SELECTOR = '[data-testid="stElementContainer"]'
#: Installed before the app's own scripts: the probes described in the module docstring.
PROBES = """
(() => {
  const CHARTS = `CHART_SELECTOR`, SHOWN = `${CHARTS}, ELEMENT_SELECTOR`;
  const PLOTS = CHARTS.split(", ").map((s) => `${s} .main-svg`).join(", ");
  const probe = window.__probe = {key: 0, bytes: 0, frame: 0, plot: 0, view: 0, viewPlot: 0, firstPlot: 0, fresh: 0};
  let inView = new WeakMap();  // element → in the window, measured once per move (see MARK_IN_VIEW)
  const seen = (element) => {
    if (!inView.has(element)) {
      const box = element.getBoundingClientRect();
      inView.set(element, box.bottom > 0 && box.top < innerHeight);
    }
    return inView.get(element);
  };
  window.__markInView = () => { inView = new WeakMap(); document.querySelectorAll(SHOWN).forEach(seen); };
  document.addEventListener("keydown", () => { probe.key = performance.now(); }, true);
  const Socket = window.WebSocket;
  window.WebSocket = class extends Socket {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        const data = event.data;
        probe.bytes += data.byteLength ?? data.size ?? data.length ?? 0;
        probe.frame = performance.now();
      });
    }
  };
  new MutationObserver((mutations) => {
    const now = performance.now();
    let plotted = false, viewed = false;
    for (const m of mutations) {
      const node = m.target.nodeType === 1 ? m.target : m.target.parentElement;
      if (!node?.isConnected) continue;  // e.g. a plot torn down after it left the page: nothing a reader sees
      const chart = node.closest(CHARTS), shown = chart ?? node.closest(SHOWN);
      if (chart && !plotted) {
        plotted = true;
        probe.plot = now;
        if (!chart.__old && !probe.fresh && chart.querySelector(".main-svg")) probe.fresh = now;
        if (!probe.firstPlot && document.querySelector(PLOTS)) probe.firstPlot = now;
      }
      if (shown && seen(shown)) {  // a chart or element added by the move is measured when it first changes
        viewed = true;
        probe.view = now;
        if (chart) probe.viewPlot = now;
      }
      if (plotted && viewed) break;
    }
  }).observe(document, {subtree: true, childList: true, attributes: true, characterData: true});
})();
""".replace("CHART_SELECTOR", CHART_SELECTOR).replace("ELEMENT_SELECTOR", ELEMENT_SELECTOR)

IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"][data-test-connection-state="CONNECTED"]'


def settle(page: Page, quiet_ms: float, timeout_ms: float = 30_000) -> dict:
    r"""Wait until the script has run and neither a message, a chart's change nor one in the window came for
    ``quiet_ms``."""
    page.wait_for_selector(IDLE, timeout=timeout_ms)
    page.wait_for_function(
        f"() => performance.now() - Math.max(__probe.frame, __probe.plot, __probe.view, __probe.key) > {quiet_ms}",
        timeout=timeout_ms,
        polling=25,
    )
    page.wait_for_selector(IDLE, timeout=timeout_ms)
    return page.evaluate("() => ({...__probe})")


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


#: Measures which charts and elements are in the window before a move (those a move adds: when they first change).
MARK_IN_VIEW = "() => __markInView()"


def move_slider(page: Page, slider, quiet_ms: float) -> dict[str, float]:
    r"""One arrow-key move of ``slider``, in ms from the key press: to the last change in the window (``view``: a chart
    redrawn, or an element's text, value or state), to the last change of any chart or in the window (``all``), and
    to the server's last message (``server``; the rest is the browser's); and the bytes received (``bytes``). Where
    nothing changed, each is the last message."""
    at_top = slider.input_value() == slider.get_attribute("max")  # an <input type="range">
    page.evaluate(MARK_IN_VIEW)
    before = page.evaluate("() => ({...__probe})")
    slider.focus()
    slider.press("ArrowLeft" if at_top else "ArrowRight")
    after = settle(page, quiet_ms)
    key = after["key"]
    view = after["view"] if after["view"] > key else after["frame"]
    end = max(view, after["plot"])
    sent = after["bytes"] - before["bytes"]
    return {"view": view - key, "all": end - key, "server": after["frame"] - key, "bytes": sent}


class Floor:
    r"""The bare page (``bench/floor_app.py``) in a tab of its own: its slider moved between the app's moves."""

    def __init__(self, page: Page, url: str, quiet_ms: float) -> None:
        self.page, self.quiet_ms = page, quiet_ms
        page.goto(url)
        page.wait_for_function("() => __probe.firstPlot > 0", timeout=60_000, polling=25)
        settle(page, quiet_ms)
        self.slider = page.get_by_role("slider").first

    def move(self) -> float:
        r"""One move of the floor's slider: ms from the key press to its chart redrawn."""
        self.page.bring_to_front()  # the caller brings its own tab back before its next move
        return move_slider(self.page, self.slider, self.quiet_ms)["view"]


def bench_page(page: Page, url: str, moves: int, quiet_ms: float, floor: Floor | None = None) -> dict:
    r"""First load and every visible slider of one page, ``moves`` moves each; with a ``floor``, each app move is
    followed by one of the bare page, and every slider gets its median's ratio to the floor's over the same minutes."""
    page.goto(url)
    page.wait_for_function("() => __probe.firstPlot > 0", timeout=60_000, polling=25)
    loaded = settle(page, quiet_ms * 2)
    result = {"first_figure_ms": loaded["firstPlot"], "all_figures_ms": loaded["plot"], "sliders": {}}
    sliders = page.locator('[data-testid="stMain"]').get_by_role("slider")
    for index in range(sliders.count()):
        slider = sliders.nth(index)
        if not slider.is_visible() or slider.is_disabled():
            continue  # e.g. inside a folded panel: a student cannot reach it without opening the panel
        name = slider.get_attribute("aria-label") or f"slider {index + 1}"
        slider.scroll_into_view_if_needed()
        samples, floors = [], []
        for _ in range(moves):
            page.bring_to_front()
            samples.append(move_slider(page, slider, quiet_ms))
            if floor is not None:
                floors.append(floor.move())
        page.bring_to_front()
        times = [move["view"] for move in samples]
        result["sliders"][name] = {
            "median_ms": statistics.median(times),
            "floor_ms": statistics.median(floors) if floors else float("nan"),
            "ratio": statistics.median(times) / statistics.median(floors) if floors else float("nan"),
            "p95_ms": percentile(times, 0.95),
            "all_median_ms": statistics.median(move["all"] for move in samples),
            "kb_per_move": statistics.median(move["bytes"] for move in samples) / 1024,
            "server_ms": statistics.median(move["server"] for move in samples),
        }
    return result


def from_sidebar(page: Page, path: str, quiet_ms: float) -> float:
    r"""ms from a click on the sidebar's link to ``path`` to the first chart of that page drawn (no new document)."""
    start = page.evaluate(f"""() => {{ __probe.fresh = 0;
      document.querySelectorAll(`{CHART_SELECTOR}`).forEach((c) => {{ c.__old = true; }});
      return performance.now(); }}""")
    page.locator(f'[data-testid="stSidebar"] a[href^="{path}?"]').first.click()  # links are relative: "RoPE?lang=en"
    page.wait_for_function("() => __probe.fresh > 0", timeout=60_000, polling=25)
    settle(page, quiet_ms)
    return page.evaluate("() => __probe.fresh") - start


def bench_charts(page: Page, base: str, rounds: int, moves: int, quiet_ms: float) -> dict[str, list[float]]:
    r"""``bench/chart_app.py``: the same twelve figures behind one slider, by ``st.plotly_chart`` and by the app's
    chart component, each way opened afresh and moved ``moves`` times per round, the two ways taking turns."""
    times: dict[str, list[float]] = {"streamlit": [], "posenc": []}
    for _ in range(rounds):
        for way, samples in times.items():
            page.goto(f"{base}/?charts={way}")
            page.wait_for_function("() => __probe.firstPlot > 0", timeout=60_000, polling=25)
            settle(page, quiet_ms * 2)
            slider = page.get_by_role("slider").first
            samples.extend(move_slider(page, slider, quiet_ms)["all"] for _ in range(moves))
    for way, samples in times.items():
        print(f"{way:<10} median {statistics.median(samples):6.0f} ms   p95 {percentile(samples, 0.95):6.0f} ms")
    ratio = statistics.median(times["streamlit"]) / statistics.median(times["posenc"])
    print(f"st.plotly_chart / Plotly.react in place: {ratio:.2f}x the median move")
    return times


def report(results: dict[str, dict]) -> list[str]:
    r"""Print a table per page; return the goals missed."""
    missed = []
    print(
        f"{'page / slider (in view: median, p95)':<44}{'median':>9}{'p95':>9}{'all':>9}{'KB/move':>9}{'server':>9}"
        f"{'floor':>9}{'ratio':>7}"
    )
    for path, page in results.items():
        first = page["first_figure_ms"]
        print(
            f"{path:<28}first figure {first:>6.0f} ms, all {page['all_figures_ms']:>6.0f} ms, "
            f"from the sidebar {page['from_sidebar_ms']:>6.0f} ms"
        )
        if first > GOALS["first_figure_ms"]:
            missed.append(f"{path} first figure")
        for name, s in page["sliders"].items():
            print(
                f"  {name[:40]:<42}{s['median_ms']:>7.0f}ms{s['p95_ms']:>7.0f}ms{s['all_median_ms']:>7.0f}ms"
                f"{s['kb_per_move']:>9.1f}{s['server_ms']:>7.0f}ms{s['floor_ms']:>7.0f}ms{s['ratio']:>6.2f}x"
            )
            if s["ratio"] > GOALS["ratio"] or s["p95_ms"] > GOALS["p95_ms"]:  # a NaN ratio (no floor) passes
                missed.append(f"{path} {name}")
    ratios = sorted(
        (s["ratio"], f"{path} {name}") for path, page in results.items() for name, s in page["sliders"].items()
    )
    ratios = [(r, where) for r, where in ratios if r == r]
    if ratios:
        print(
            f"slider medians over the bare page's (bench/floor_app.py), same run: {ratios[0][0]:.2f}–"
            f"{ratios[-1][0]:.2f}x (goal ≤ {GOALS['ratio']:g}x; slowest: {ratios[-1][1]})"
        )
    return missed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", help="a running server on loopback (default: start one)")
    ap.add_argument("--pages", help="comma-separated URL paths (default: every page)")
    ap.add_argument("--moves", type=int, default=10, help="moves per slider")
    ap.add_argument("--quiet", type=float, default=400.0, help="ms with no message and no redraw that end a move")
    ap.add_argument("--lang", default="en")
    ap.add_argument("--json", type=Path, help="write the figures here")
    ap.add_argument("--charts", action="store_true", help="time bench/chart_app.py: st.plotly_chart against ours")
    ap.add_argument("--rounds", type=int, default=3, help="--charts: rounds of the two ways, taking turns")
    ap.add_argument("--no-floor", action="store_true", help="skip the bare one-slider page (no ratios)")
    args = ap.parse_args()
    if args.charts:
        return compare_charts(args)
    proc = None if args.url else start_server(free_port())
    floor_proc = None
    base = args.url or f"http://127.0.0.1:{proc.args[proc.args.index('--server.port') + 1]}"
    paths = args.pages.split(",") if args.pages else [info.url_path for info in catalog.PAGES]  # the registry
    results = {}
    try:
        floor_proc = None if args.no_floor else start_server(free_port(), script="bench/floor_app.py")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            context.add_init_script(PROBES)
            floor = None
            if floor_proc is not None:
                port = floor_proc.args[floor_proc.args.index("--server.port") + 1]
                floor = Floor(context.new_page(), f"http://127.0.0.1:{port}/", args.quiet)
            page = context.new_page()
            page.goto(f"{base}/?lang={args.lang}")  # the server's own start-up (imports) is not a page's first load
            settle(page, args.quiet)
            for path in paths:
                results[path] = bench_page(page, f"{base}/{path}?lang={args.lang}", args.moves, args.quiet, floor)
            page.goto(f"{base}/?lang={args.lang}")  # then the reading path again, page to page by the sidebar
            settle(page, args.quiet)
            for path in paths:
                results[path]["from_sidebar_ms"] = from_sidebar(page, path, args.quiet)
            browser.close()
    finally:
        for server in (proc, floor_proc):
            if server is not None:
                stop_server(server)
    missed = report(results)
    print("goals met" if not missed else f"goals missed: {len(missed)}")
    if args.json:
        args.json.write_text(json.dumps({"results": results, "missed": missed}, indent=2))
    return 0


def compare_charts(args: argparse.Namespace) -> int:
    proc = start_server(free_port(), script="bench/chart_app.py")
    base = f"http://127.0.0.1:{proc.args[proc.args.index('--server.port') + 1]}"
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            context.add_init_script(PROBES)
            times = bench_charts(context.new_page(), base, args.rounds, args.moves, args.quiet)
            browser.close()
    finally:
        stop_server(proc)
    if args.json:
        args.json.write_text(json.dumps(times, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
