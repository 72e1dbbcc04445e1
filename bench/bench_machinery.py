r"""Two of the app's three pieces of custom machinery against what the libraries offer, side by side in one run.

    python bench/bench_machinery.py [--repeat 20]

1. **Sending a figure.** Every figure of every page at its defaults (the real-model page's from its shipped results,
   without the model), as the app's chart sends it
   (:func:`posenc_ui.frame.chart.payload`), built two ways from the same trace dicts:
   plotly's public path (``go.Figure(spec)``, which validates every property) and :class:`BuiltFigure` (which encodes
   the dict once and keeps the JSON it sends; ``tests/app/test_figures.py`` pins that both send the same JSON).
   "miss" is a slider move that builds the figure and sends it; "hit" sends an already-built figure again (another
   widget moved, or another session shows the same figure from the cache).
2. **Remembering a result.** One page result (a dict with a 256² float32 heatmap) read back from
   :func:`posenc_ui.memo.memo` (cachetools, bounded in bytes), ``functools.lru_cache`` (bounded in entries), and
   ``st.cache_data`` (bounded in entries, returns a copy). Only the first can bound the app's memory in bytes.

The third, the chart component that redraws a plot in place, is timed in the browser:
``python bench/bench_browser.py --charts``.

The figures are medians over ``--repeat`` rounds; ratios are to the first column of each table.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import plotly.graph_objects as go  # noqa: E402

from posenc_ui.figures.built import BuiltFigure, unwire  # noqa: E402
from posenc_ui.frame.chart import payload  # noqa: E402
from posenc_ui.frame.page import PLOTLY_CONFIG  # noqa: E402
from posenc_ui.lessons import VIEWS  # noqa: E402
from posenc_ui.memo import memo, pool  # noqa: E402
from posenc_ui.state import defaults  # noqa: E402


def median_ms(fn: Callable[[], object], repeat: int) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - start)
    return 1e3 * statistics.median(samples)


def send(fig: go.Figure) -> bytes:
    r"""What the app's chart does with a figure before it goes on the wire."""
    return payload(fig, PLOTLY_CONFIG)


def page_specs() -> dict[str, list[dict]]:
    r"""Page id → the plain trace-and-layout dicts of its figures at the defaults (arrays as numpy arrays)."""
    specs: dict[str, list[dict]] = {}
    for view in VIEWS:
        values = defaults(view.params)
        for build in view.figures.values():
            try:
                fig = build(values, "en")
            except ValueError:
                continue
            specs.setdefault(view.page_id, []).append(unwire(fig.to_dict()))
    return specs


def figure_costs(specs: list[dict], repeat: int) -> np.ndarray:
    r"""ms to send these figures: built by plotly then sent, built then sent, and sent again (plotly's, ours)."""
    go_figs = [go.Figure(spec) for spec in specs]
    built = [BuiltFigure(spec) for spec in specs]
    return np.array(
        [
            median_ms(lambda: [send(go.Figure(spec)) for spec in specs], repeat),
            median_ms(lambda: [send(BuiltFigure(spec)) for spec in specs], repeat),
            median_ms(lambda: [send(fig) for fig in go_figs], repeat),
            median_ms(lambda: [send(fig) for fig in built], repeat),
        ]
    )


def bench_figures(repeat: int) -> None:
    print("1. sending a page's figures (ms, median)")
    heads = ("go miss", "built miss", "ratio", "go hit", "built hit", "ratio")
    print(f"{'page':<12}{'figs':>5}" + "".join(f"{h:>11}" for h in heads))
    totals = np.zeros(4)
    for page, specs in page_specs().items():
        row = figure_costs(specs, repeat)
        totals += row
        print(f"{page:<12}{len(specs):>5}" + _cells(row))
    print(f"{'all pages':<17}" + _cells(totals))


def _cells(row: np.ndarray) -> str:
    return (
        f"{row[0]:>11.2f}{row[1]:>11.2f}{row[0] / row[1]:>10.1f}×"
        f"{row[2]:>11.2f}{row[3]:>11.2f}{row[2] / row[3]:>10.1f}×"
    )


def bench_caches(repeat: int) -> None:
    import streamlit as st
    from streamlit import logger as streamlit_logger

    streamlit_logger.set_log_level("error")  # "no runtime": st.cache_data still caches, in memory
    heatmap = {"z": np.random.default_rng(0).standard_normal((256, 256)).astype(np.float32), "title": "t"}

    def result(n: int) -> dict:
        return heatmap

    kinds = {
        "memo (cachetools, bytes)": memo(budget=pool(64 * 2**20))(result),
        "functools.lru_cache (entries)": functools.lru_cache(maxsize=64)(result),
        "st.cache_data (entries, copies)": st.cache_data(max_entries=64)(result),
    }
    print("\n2. reading back a cached 256² heatmap result (µs, median of 1000 reads)")
    first = None
    for name, cached in kinds.items():
        cached(1)
        micro = 1e3 * median_ms(lambda: [cached(1) for _ in range(1000)], max(3, repeat // 4)) / 1000  # noqa: B023
        first = first or micro
        print(f"{name:<34}{micro:>9.1f} µs{micro / first:>7.1f}×")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    bench_figures(args.repeat)
    bench_caches(args.repeat)


if __name__ == "__main__":
    main()
