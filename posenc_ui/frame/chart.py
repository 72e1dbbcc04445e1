r"""Figures in the browser, redrawn in place: a small Streamlit component around plotly.js's ``Plotly.react``.

Why not ``st.plotly_chart``: Streamlit 1.67 gives each plotly chart an element id that hashes its figure, and its
frontend uses that id as the chart's React key. A figure whose numbers change is therefore a *new* element: the old
plot is torn down and the new one built from nothing (``Plotly.newPlot``), every SVG node and text measurement
again. ``Plotly.react`` on the plot that is already there diffs the two figures and redraws what changed. For RoPE's
twelve figures behind one slider that changes them all, a move took a median of 786 ms through ``st.plotly_chart``
and 361 ms through this component (2.2×; ``python bench/bench_browser.py --charts``, the two ways taking turns in
one run in Chromium on the 2-core machine).

The component (``st.components.v2``) keeps its identity across reruns because it has a key. Streamlit calls its
JavaScript again with the new figure on the same element, and the JavaScript calls ``Plotly.react`` there.

Which plotly.js: plotly.js's own *cartesian* bundle (``static/``, served by Streamlit at ``app/static/``; see
:mod:`posenc_ui.plotlyjs`), the same release as the plotly.js of the ``plotly`` package in ``requirements.txt``. It
registers the trace types in :data:`~posenc_ui.plotlyjs.LEAN_TRACES`, which draw every figure but the
context-extension page's polar arcs; a figure with any other type waits for the full bundle that Streamlit ships for
``st.plotly_chart`` (``static/js/PlotlyChart.<hash>.js``), in that tab only. Loading plotly.js is the largest single
task of a new document: imported into a page of the app in Chromium on the 2-core machine, 0.53–0.77 s for the
cartesian bundle (1.5 MB) against 1.4–1.7 s for the full one (4.7 MB), in the same run; deep links drew their first
figure 0.7–1.3 s sooner (docs/benchmarks.md, "What a student feels").
Each is loaded once per tab.

What ``st.plotly_chart`` gave that this keeps: the figure's own height, the full width of its column, plotly's
toolbar and config, and ``theme=None`` (the figure's own template). What it gave that this drops: Streamlit's
full-screen button above the chart (plotly's own toolbar stays).

What it did not give: a figure drawn to scale (equal units on both axes) may carry ``layout.meta.fit``
(:func:`~posenc_ui.figures.style.fit_height`), and is then drawn no taller than its content needs at the column's
width (plot width × aspect + plotly's top and bottom margins), so that a phone shows no band of blank space above and
below it. The first draw estimates the margins from ``layout.margin``; when plotly's own differ (a colour bar, a
wrapped title), the plot is redrawn once at the exact height (``Plotly.react`` again; a ``Plotly.relayout`` of the
height, tried first, left a plot at its old width when the window had just narrowed). The height is fitted when a
figure is drawn, not when the window is resized later: a figure drawn on a laptop and then narrowed keeps its height,
at the new width, until its next redraw.

A figure's title is wrapped to the width it is drawn at. The builders wrap it for a phone and keep wider wraps in
``layout.meta.titles`` (:func:`~posenc_ui.figures.style.title_wraps`); the script draws the widest one that fits the
chart's width at the title's font size (larger in presenter mode), and moves the top margin and the height by a line
for each line gained or lost, as :func:`~posenc_ui.figures.style.rewrap` does for the exported files. A window resized
later (a phone turned, a projector's window) redraws the charts whose title then wraps otherwise.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

import plotly.graph_objects as go
import streamlit as st

from ..figures import style
from ..figures.built import figure_json
from ..plotlyjs import LEAN_BUNDLE, LEAN_TRACES

#: The class of the element that holds one plotly plot (browser tests and the browser bench look for it).
CHART_CLASS = "posenc-chart"
NAME = "posenc_chart"


@cache
def plotly_module() -> str:
    r"""The file name of the plotly.js bundle inside Streamlit's frontend (``PlotlyChart.<hash>.js``)."""
    folder = Path(st.__file__).parent / "static" / "static" / "js"
    found = sorted(p.name for p in folder.glob("PlotlyChart.*.js"))
    if len(found) != 1:
        raise RuntimeError(
            f"expected one PlotlyChart bundle in {folder}, found {found}: re-check posenc_ui.frame.chart"
        )
    return found[0]


# Sent with every chart (Streamlit inlines a component's script in its element), so it is kept short. The first chart
# of a tab makes one drawer for the window; later copies of the script use it. A chart in view is redrawn at once;
# one out of view waits for an idle moment, one at a time, or until it scrolls into view. Each bundle sets
# window.Plotly as it runs: the full one loads after the lean one, and each plot keeps the plotly.js that drew it.
_SCRIPT = """
const charts = (window.__posencCharts ??= (() => {
  const main = document.querySelector('script[src*="/static/js/index."]').src;
  const wait = window.requestIdleCallback ?? ((f) => setTimeout(f, 50));
  const lean = new Set(TRACES), queue = [];
  let leanPlotly, fullPlotly, draining = false;
  const script = (src) => new Promise((ok, fail) => document.head.append(Object.assign(document.createElement("script"),
    { src, onload: () => ok(window.Plotly), onerror: () => fail(new Error(`${src} did not load`)) })));
  const load = (figure) => {
    leanPlotly ??= script(new URL("../../app/static/LEAN", main).href);
    if (!figure || (figure.data ?? []).every((trace) => lean.has(trace.type ?? "scatter"))) return leanPlotly;
    return (fullPlotly ??= leanPlotly.catch(() => null).then(() => import(new URL("MODULE", main).href))
      .then(() => window.Plotly));
  };
  const draw = (div) => {
    const next = div.next;
    div.next = null;
    if (next) div.drawn = Promise.all([load(next.figure), div.drawn]).then(async ([plotly]) => {
      if (div.plotly !== plotly) div.plotly?.purge(div);
      div.plotly = plotly;
      const layout = wrap(div, next.figure.layout), guess = fit(div, layout);
      const react = (height) =>
        plotly.react(div, { ...next.figure, layout: { ...layout, height }, config: next.config });  // frames too
      await react(guess);
      const height = fit(div, layout);  // with plotly's own margins
      if (height !== guess) await react((div.style.minHeight = `${height}px`, height));
      div.shown = next;
    }).catch((error) => { div.textContent = `plotly.js: ${error}`; });
    return Promise.resolve(div.drawn);
  };
  const drain = () => {
    const div = queue.shift();
    draining = Boolean(div);
    if (div) wait(() => draw(div).then(drain));
  };
  const fit = (div, layout) => {  // layout.meta.fit: drawn to scale, no taller than its content at this width
    const aspect = layout.meta?.fit?.aspect, m = div._fullLayout?._size ?? { ...layout.template?.layout?.margin,
      ...layout.margin }, w = div.clientWidth - m.l - m.r;
    return aspect && w > 0 ? Math.min(layout.height, Math.ceil(w * aspect + m.t + m.b)) : layout.height ?? 450;
  };
  const wrap = (div, layout) => {  // layout.meta.titles: the widest wrap of the title that fits this width
    const wraps = layout.meta?.titles, title = layout.title ?? {}, lines = (s) => String(s).split("<br>").length;
    if (!wraps || !div.clientWidth) return layout;
    const w = WRAP, units = (div.clientWidth - 8) / (w.unit * (title.font?.size ?? w.size) / w.size);
    const text = (wraps.findLast((o) => o[0] <= units) ?? wraps[0])[1];
    const more = Math.round(w.line * (title.font?.size ?? w.size) / w.size) * (lines(text) - lines(title.text));
    return { ...layout, title: { ...title, text, pad: { l: 4, t: w.pad + w.lift * (lines(text) > 1) } },
      margin: { ...layout.margin, t: (layout.margin?.t ?? w.top) + more }, height: (layout.height ?? w.height) + more };
  };
  const seen = new IntersectionObserver((entries) => entries.forEach((e) => e.isIntersecting && draw(e.target)));
  const show = (div, next) => {
    div.next = next;
    const box = div.getBoundingClientRect();
    if (box.bottom > 0 && box.top < innerHeight) return draw(div);
    if (!queue.includes(div)) queue.push(div);
    if (!draining) drain();
  };
  let resized;
  addEventListener("resize", () => (clearTimeout(resized), resized = setTimeout(() => {  // a title that wraps anew
    for (const div of document.querySelectorAll(".CLASS")) {
      const last = div.shown;
      if (last && !div.next && wrap(div, last.figure.layout).title?.text !== div.layout?.title?.text) show(div, last);
    }
  }, 250)));
  return { load, show, seen, fit, wrap };
})());
export default function ({ parentElement, data }) {
  if (!data.length) return void setTimeout(charts.load, 0);  // preload_plotly(): nothing to draw yet
  let div = parentElement.querySelector(".CLASS");
  if (!div) {
    div = Object.assign(document.createElement("div"), { className: "CLASS" });
    parentElement.append(div);
    charts.seen.observe(div);
  }
  const next = JSON.parse(new TextDecoder().decode(data));
  div.style.minHeight = `${charts.fit(div, charts.wrap(div, next.figure.layout))}px`;
  charts.show(div, next);
  return () => { div.next = null; charts.seen.unobserve(div); div.plotly?.purge(div); };
}
"""


#: What the browser needs to wrap a title as :func:`~posenc_ui.figures.style.rewrap` does.
WRAP = {
    "unit": round(style.UNIT_PX, 4),
    "size": style.TITLE_SIZE,
    "line": style.TITLE_LINE,
    "pad": style.TITLE_PAD,
    "lift": style.TITLE_LIFT,
    "top": style.TOP_MARGIN,
    "height": style.HEIGHT,
}


@cache
def _component() -> Any:
    if not LEAN_BUNDLE.is_file():
        raise RuntimeError(f"{LEAN_BUNDLE} is missing: the charts load plotly.js from it (see posenc_ui.frame.chart)")
    script = (
        _SCRIPT.replace("MODULE", plotly_module())
        .replace("LEAN", LEAN_BUNDLE.name)
        .replace("TRACES", json.dumps(LEAN_TRACES))
        .replace("CLASS", CHART_CLASS)
        .replace("WRAP", json.dumps(WRAP))
        .strip()
    )
    return st.components.v2.component(NAME, js=script, isolate_styles=False)


def payload(fig: go.Figure, config: dict[str, Any]) -> bytes:
    r"""What one chart sends: the figure as plotly.js reads it (:func:`~posenc_ui.figures.built.figure_json`, which a
    cached figure answers with the bytes it keeps) and the plot's config."""
    return b'{"figure":%s,"config":%s}' % (figure_json(fig), json.dumps(config).encode())


def plotly_chart(fig: go.Figure, *, config: dict[str, Any], key: str) -> None:
    r"""Draw ``fig`` full width (following the window's); the element named ``key`` is updated in place later."""
    _component()(data=payload(fig, {**config, "responsive": True}), key=key)


def preload_plotly() -> None:
    r"""Start loading plotly.js in the browser now, before the page's first chart (drawn once per page, by the frame).

    A tab that opens a page loads and runs plotly.js (the cartesian bundle) before it can draw a figure. Started with
    the sidebar, before the page's content, that overlaps with the server computing the page's first figures; on the
    home page it is done before the reader opens a topic.
    """
    _component()(data=b"", key="posenc.plotly")
