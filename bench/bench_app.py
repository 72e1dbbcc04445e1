r"""Server-side cost of the app: rerun time per slider move, figure payload, cold start.

    python bench/bench_app.py [--moves 30]

For each page, one slider is moved through ``--moves`` distinct values (so every move misses the caches, as a
student dragging a slider does) at the default settings and again with every slider at its maximum; the time of
each rerun is measured with AppTest (which adds ~20 ms of its own to each). Payload is the figure JSON Streamlit
sends (``PlotlyChart.spec``), per page. Cold start is a fresh interpreter importing the app and running the home
page, and a fresh ``streamlit run`` answering its health check. Goals (issue 3): p95 < 150 ms at defaults,
< 500 ms at maximum; payload ≤ 1 MB per figure; cold start < 1.5 s.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from streamlit.testing.v1 import AppTest  # noqa: E402

from posenc_ui import catalog  # noqa: E402
from posenc_ui.lessons import VIEWS  # noqa: E402
from posenc_ui.state import IntParam  # noqa: E402

#: The slider each page's benchmark drags: the one that changes the most work (else the page's first slider).
DRAGGED = {
    "why": "why.dim",
    "first": "first.length",
    "sinusoidal": "sinusoidal.dim",
    "learned": "learned.dim",
    "relative": "relative.d_model",
    "alibi": "alibi.length",
    "lab": "lab.steps",
    "extension": "extension.factor",
    "compare": "compare.length",
    "rope": "rope.dim",
}


def dragged(page: catalog.PageEntry) -> str:
    view = next(v for v in VIEWS if v.page_id == page.id)
    first_slider = next(p.name for p in view.params if isinstance(p, IntParam))
    return DRAGGED.get(page.id, f"{page.id}.{first_slider}")


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def drag(at: AppTest, key: str, moves: int, *, from_top: bool) -> list[float]:
    r"""Move slider ``key`` through ``moves`` distinct values (down from max, or up from min); ms per rerun."""
    slider = at.slider(key=key)
    step = slider.proto.step or 1
    start = slider.max if from_top else slider.min
    times = []
    for i in range(1, moves + 1):
        value = start - i * step if from_top else start + i * step
        at.slider(key=key).set_value(max(slider.min, min(slider.max, value)))
        began = time.perf_counter()
        at.run()
        times.append((time.perf_counter() - began) * 1e3)
        assert not at.exception, at.exception
    return times


def payload(at: AppTest) -> tuple[int, int]:
    r"""(largest figure, all figures) in bytes of figure JSON (with the plot's config) on the page as rendered."""
    sizes = [len(chart.proto.bytes) for chart in at.get("bidi_component")]
    return max(sizes), sum(sizes)


def bench_page(page: catalog.PageEntry, moves: int) -> dict[str, float]:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    at.switch_page(page.script)
    at.query_params["lang"] = "en"
    at.run()
    key = dragged(page)
    drag(at, key, 3, from_top=False)  # warm-up: imports, first compilations
    default_times = drag(at, key, moves, from_top=False)
    big_default, total_default = payload(at)
    for slider in at.slider:
        slider.set_value(slider.max)
    at.run()
    max_times = drag(at, key, moves, from_top=True)
    big_max, total_max = payload(at)
    return {
        "p50 default ms": statistics.median(default_times),
        "p95 default ms": percentile(default_times, 0.95),
        "p50 max ms": statistics.median(max_times),
        "p95 max ms": percentile(max_times, 0.95),
        "largest fig KB (default)": big_default / 1e3,
        "page KB (default)": total_default / 1e3,
        "largest fig KB (max)": big_max / 1e3,
        "page KB (max)": total_max / 1e3,
    }


def cold_start() -> dict[str, float]:
    r"""Fresh interpreter → home page run (AppTest), and fresh server → health check, in seconds."""
    script = (
        "import time; t = time.perf_counter()\n"
        "from streamlit.testing.v1 import AppTest\n"
        "at = AppTest.from_file('app.py', default_timeout=60); at.run(); assert not at.exception\n"
        "print(time.perf_counter() - t)"
    )
    began = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True)
    process_total = time.perf_counter() - began
    from server import free_port, start_server, stop_server

    began = time.perf_counter()
    proc = start_server(free_port())
    server_ready = time.perf_counter() - began
    port = proc.args[proc.args.index("--server.port") + 1]
    began = time.perf_counter()
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as resp:
        resp.read()
    index_html = time.perf_counter() - began
    stop_server(proc)
    return {
        "import + first home run (s)": float(out.stdout.strip().splitlines()[-1]),
        "fresh interpreter total (s)": process_total,
        "streamlit server ready (s)": server_ready,
        "index.html served (s)": index_html,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--moves", type=int, default=30)
    args = parser.parse_args()
    for page in catalog.PAGES:
        row = bench_page(page, args.moves)
        print(f"{page.number}. {page.id:<11} " + "  ".join(f"{k} {v:7.1f}" for k, v in row.items()), flush=True)
    for name, seconds in cold_start().items():
        print(f"cold start: {name:<30} {seconds:6.2f}")


if __name__ == "__main__":
    main()
