"""The benchmark scripts still run (a quick pass on small sizes); their figures are read by people, not asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def bench(script: str, *args: str) -> str:
    r"""Run ``bench/<script>`` with ``args`` from the repository root; its standard output (it must exit 0)."""
    run = subprocess.run(
        [sys.executable, f"bench/{script}", *args], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return run.stdout


def test_core_bench_runs_and_its_fast_rope_matches_the_published_loop(tmp_path: Path) -> None:
    out = tmp_path / "bench.json"
    bench("bench_core.py", "--quick", "--json", str(out))
    results = json.loads(out.read_text())
    assert results["apply_rope_vs_loop (L=4096, d=128)"]["max_abs_diff"] < 1e-10
    assert all(row["max_abs_diff"] < 1e-8 for row in results["far_positions (L=4096, d=128)"])


def test_machinery_bench_runs_on_every_page() -> None:
    out = bench("bench_machinery.py", "--repeat", "1")
    assert out.count("×") >= 2 * 12 + 3, out  # two ratios for each page and the total, three caches
    assert "real" in out.split()  # the real-model page's figures, from its shipped results


def test_browser_bench_runs_a_page_and_compares_the_two_ways_of_drawing_charts(tmp_path: Path) -> None:
    r"""Real server, real Chromium: one move of each slider of one page, then the ``--charts`` comparison."""
    out = tmp_path / "browser.json"
    bench("bench_browser.py", "--moves", "1", "--pages", "First_attempts", "--json", str(out))
    page = json.loads(out.read_text())["results"]["First_attempts"]
    assert page["first_figure_ms"] > 0 and page["from_sidebar_ms"] > 0 and len(page["sliders"]) == 2
    assert all(s["median_ms"] <= s["all_median_ms"] for s in page["sliders"].values())
    assert all(s["floor_ms"] > 0 and s["ratio"] > 0 for s in page["sliders"].values())  # the bare page beside it
    charts = bench("bench_browser.py", "--charts", "--rounds", "1", "--moves", "1")
    assert "st.plotly_chart / Plotly.react in place" in charts, charts


@pytest.mark.parametrize("compare", ["blas", "nagle"])
def test_moves_bench_compares_two_settings_on_one_page(tmp_path: Path, compare: str) -> None:
    r"""Two real servers, one tab each: every slider of one page moved once on both."""
    out = tmp_path / "moves.json"
    bench("bench_moves.py", "--compare", compare, "--moves", "1", "--pages", "Sinusoidal", "--json", str(out))
    result = json.loads(out.read_text())
    assert result["compare"] == compare and len(result["setups"]) == 2
    assert {row["page"] for row in result["sliders"]} == {"Sinusoidal"} and len(result["sliders"]) >= 3
    assert all(row[f"rerun ms: {name}"] > 0 for row in result["sliders"] for name in result["setups"])
