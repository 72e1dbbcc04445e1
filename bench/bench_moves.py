r"""The server's cost per slider move, two settings of ``posenc_ui.frame.process`` side by side.

    python bench/bench_moves.py [--compare blas|nagle] [--moves 4] [--pages RoPE,Relative] [--json out.json]

Two ``streamlit run app.py`` servers run side by side: one as the app sets itself up, one with a setting turned
back. ``--compare blas`` (the default): numpy's BLAS on one thread against ``POSENC_BLAS_THREADS=auto`` (OpenBLAS's
own choice: one thread a core). ``--compare nagle``: Nagle's algorithm off on the server's connections against
``POSENC_NO_DELAY=off`` (Streamlit's own sockets: every reply's messages after the first wait for the client's
delayed acknowledgement). One tab on each (:class:`load_session.Session`, Streamlit's own protocol) opens every
page and moves every slider ``--moves`` times to random values, each value sent to both servers in turn (who goes
first alternates), as the load tool moves them (a slider drawn in a section reruns that section alone). A move's
cost is the CPU its server used from the move until both servers have answered and ``--gap`` seconds more have
passed (0.3 by default): an OpenBLAS worker that spins after its product counts where it spins. The gap matters to
Nagle's algorithm too: after a connection has been quiet for about 0.2 s, Linux acknowledges the next data at once,
so only replies that follow each other closely (arrow keys pressed in a row: ``--gap 0.05``) wait on a delayed
acknowledgement. Also reported: the time to the rerun's last message, and the bytes the rerun brought (a count: the
same on a busy machine as on a quiet one). psutil reads CPU in 10 ms ticks, so a slider's figure is a mean over its
moves. Loopback only; everything it starts it stops.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from load_session import Session, new_value  # noqa: E402
from server import free_port, start_server, stop_server  # noqa: E402

from posenc_ui import catalog  # noqa: E402
from posenc_ui.frame.process import BLAS_ENV, NO_DELAY_ENV  # noqa: E402

#: Each comparison: the app's setting first, then the one it turns back.
COMPARISONS = {
    "blas": {"one BLAS thread": {}, "BLAS's own threads": {BLAS_ENV: "auto"}},
    "nagle": {"Nagle off": {}, "Nagle on": {NO_DELAY_ENV: "off"}},
}
LAB = catalog.BY_ID["lab"].url_path  # its sliders start training runs: bench/bench_lab.py measures those


def cpu_seconds(proc: psutil.Process) -> float:
    times = proc.cpu_times()
    return times.user + times.system


def slider_costs(
    tabs: dict[str, Session],
    procs: dict[str, psutil.Process],
    first: dict,
    path: str,
    label: str,
    moves: int,
    rng: random.Random,
    gap: float = 0.3,
) -> dict | None:
    r"""Move the slider ``label`` ``moves`` times, each value on both servers in turn: its row (CPU and rerun ms per
    server). A slider's id changes with its range (a bound that follows another slider), so it is found by label."""
    app = next(iter(tabs))  # the app's own setting
    slider_id, slider = next((i, s) for i, s in first[app].sliders.items() if s.label == label)
    cost: dict[str, list[float]] = {name: [] for name in tabs}
    took: dict[str, list[float]] = {name: [] for name in tabs}
    sent: dict[str, list[float]] = {name: [] for name in tabs}
    for move in range(moves):
        value = new_value(slider, rng)
        if value is None:
            break
        before = {name: cpu_seconds(procs[name]) for name in tabs}
        for name in list(tabs) if move % 2 == 0 else list(reversed(tabs)):
            fragment = first[name].fragments.get(slider_id, "")
            run = tabs[name].rerun(tabs[name].pages[path], (slider_id, value), fragment)
            if run.errors:
                raise RuntimeError(f"{name}, {path}: {run.errors}")
            took[name].append(run.seconds * 1e3)
            sent[name].append(run.received / 1024)
        time.sleep(gap)  # a spinning worker's CPU counts for the move that woke it
        for name in tabs:
            cost[name].append((cpu_seconds(procs[name]) - before[name]) * 1e3)
        slider = run.sliders.get(slider_id, slider)
    if not took[app]:
        return None
    row = {"page": path, "slider": slider.label, "section": bool(first[app].fragments.get(slider_id))}
    for name in tabs:
        row[f"cpu ms: {name}"] = statistics.fmean(cost[name])
        row[f"rerun ms: {name}"] = statistics.median(took[name])
        row[f"KB: {name}"] = statistics.median(sent[name])
    return row


def bench(moves: int, pages: list[str] | None, seed: int, compare: str = "blas", gap: float = 0.3) -> dict:
    setups = COMPARISONS[compare]
    app = next(iter(setups))
    rng = random.Random(seed)
    servers = {name: start_server(free_port(), env=env) for name, env in setups.items()}
    try:
        procs = {name: psutil.Process(server.pid) for name, server in servers.items()}
        tabs = {}
        for name, server in servers.items():
            port = server.args[server.args.index("--server.port") + 1]
            tabs[name] = Session(f"http://127.0.0.1:{port}", deadline=60)
            tabs[name].connect()
            tabs[name].rerun()
        paths = pages or [page.url_path for page in catalog.PAGES if page.url_path != LAB]  # the registry
        rows = []
        for path in paths:
            for _ in range(2):  # the second run is the one kept: imports and caches are warm
                first = {name: tab.rerun(tab.pages[path]) for name, tab in tabs.items()}
            for label in [slider.label for slider in first[app].sliders.values()]:
                row = slider_costs(tabs, procs, first, path, label, moves, rng, gap)
                if row is None:
                    continue
                rows.append(row)
                first = {name: tab.rerun(tab.pages[path]) for name, tab in tabs.items()}  # the page's full state
                print(
                    f"{path:18s} {row['slider'][:34]:34s} CPU "
                    + " / ".join(f"{row[f'cpu ms: {n}']:6.1f}" for n in tabs)
                    + " ms, rerun "
                    + " / ".join(f"{row[f'rerun ms: {n}']:6.1f}" for n in tabs)
                    + " ms, "
                    + " / ".join(f"{row[f'KB: {n}']:6.1f}" for n in tabs)
                    + " KB",
                    flush=True,
                )
    finally:
        for server in servers.values():
            stop_server(server)
    totals = {name: statistics.fmean(row[f"cpu ms: {name}"] for row in rows) for name in setups}
    reruns = {name: statistics.fmean(row[f"rerun ms: {name}"] for row in rows) for name in setups}
    ours, back = setups
    for what, means in (("server CPU", totals), ("rerun (median, to its last message)", reruns)):
        print(
            f"mean {what} per move over {len(rows)} sliders ({ours} / {back}): {means[ours]:.1f} / "
            f"{means[back]:.1f} ms, {means[back] / means[ours]:.2f}×"
        )
    return {
        "moves": moves,
        "gap_s": gap,
        "compare": compare,
        "setups": list(setups),
        "sliders": rows,
        "mean_cpu_ms": totals,
        "mean_rerun_ms": reruns,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compare", choices=sorted(COMPARISONS), default="blas", help="the two settings side by side")
    ap.add_argument("--moves", type=int, default=4, help="moves per slider (random values)")
    ap.add_argument("--pages", help="comma-separated URL paths (default: every page but the lab)")
    ap.add_argument("--gap", type=float, default=0.3, help="seconds between a move's answers and the next move")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", type=Path, help="write the figures here")
    args = ap.parse_args()
    result = bench(args.moves, args.pages.split(",") if args.pages else None, args.seed, args.compare, args.gap)
    if args.json:
        args.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
