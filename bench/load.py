r"""Classroom load: N simulated students drive the app over Streamlit's own websocket protocol.

    python bench/load.py [--sessions 50] [--moves 3] [--rounds 2] [--think 1.0] [--processes K | --url URL]

Without ``--url`` it starts ``streamlit run app.py`` on a free loopback port (``--processes K``: the deployment that
``python -m posenc_ui.serve --processes K`` gives a class, nginx in front) and stops it at the end. Each session
does what a browser tab does: ``GET /`` (cookies), a websocket to ``/_stcore/stream`` (subprotocol ``streamlit``),
``BackMsg.rerun_script`` for the home page, then for every built page of :mod:`posenc_ui.catalog` a page switch
(``page_script_hash`` from the server's ``NewSession.app_pages``) and ``--moves`` slider moves (``widget_states``
with a new value for one slider read from the page's own deltas), waiting ``--think`` seconds (± 50 %) between
actions. Like a browser, a session keeps Streamlit's message cache: an element it already holds (a figure that did
not change) comes back as its hash. A rerun is timed from the send to ``ForwardMsg.script_finished``. Errors: an
exception element, a run that does not finish successfully, a page not found, a rerun past ``--deadline`` seconds, a
dropped connection.

Every round repeats the same walk on the same sessions with fresh slider values (``--repeat-values``: the same
ones), so the server's caches see new keys each round; RSS (psutil, the server and its children) is sampled before
and after each round and must stop growing once the result pools have filled (checked from the third round on). CPU
seconds of the load tool itself are reported too (it must not be the bottleneck). It only ever connects to loopback
addresses, and every loop is bounded by ``--duration`` seconds.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import random
import socket
import statistics
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import psutil
import websocket

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "bench"))  # load_session beside this file, however this one was loaded

from load_session import Session, Stats, walk  # noqa: E402
from server import free_port, start_server, stop_server  # noqa: E402

from posenc_ui import catalog  # noqa: E402
from posenc_ui.serve import deployment  # noqa: E402
from posenc_ui.serve.backend import WARM_PAGES_ENV  # noqa: E402
from posenc_ui.turns import QUEUE_ENV  # noqa: E402

#: A class's goals (issues 3 and 46): p95 under 1 s in every round, and from the second round on (caches warm) under
#: 0.5 s on every page; 0 errors; 1 GB a server process.
GOALS = {"errors": 0, "p95_s": 1.0, "page_p95_s": 0.5, "rss_mb": 1024.0}
#: The class the goals are stated for: 50 students on 2 server processes behind nginx, every page, two rounds.
CLASS = {"sessions": 50, "processes": 2, "rounds": 2}


def require_loopback(url: str) -> None:
    r"""Refuse any URL whose host resolves to anything but a loopback address."""
    host = urlsplit(url).hostname or ""
    try:
        addrs = {info[4][0] for info in socket.getaddrinfo(host, None)}
    except socket.gaierror as err:
        raise SystemExit(f"cannot resolve {host!r}: {err}") from err
    if not addrs or not all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addrs):
        raise SystemExit(f"refusing {url}: the load tool only connects to loopback addresses (got {sorted(addrs)})")


def percentile(samples: Sequence[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else float("nan")


def server_rss_mb(pids: Sequence[int]) -> float:
    r"""Resident memory of the processes ``pids`` and all their children, in MB."""
    total = 0
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            for p in (proc, *proc.children(recursive=True)):
                total += p.memory_info().rss
        except psutil.NoSuchProcess:
            continue
    return total / 2**20


def cpu_seconds(pids: Sequence[int]) -> float:
    r"""User + system CPU seconds used so far by the processes ``pids`` and their children."""
    total = 0.0
    for pid in pids:
        try:
            proc = psutil.Process(pid)
            total += sum(sum(p.cpu_times()[:2]) for p in (proc, *proc.children(recursive=True)))
        except psutil.NoSuchProcess:
            continue
    return total


def own_cpu() -> float:
    r"""CPU seconds of this process alone (not the server it may have started)."""
    return sum(psutil.Process().cpu_times()[:2])


def built_paths() -> list[str]:
    r"""URL paths of every built page that a class's goals are stated for, in reading order (from the catalogue,
    never a fixed list). The real-model page is among them: the class moves its sliders on the shipped passage,
    whose results are shipped (a reader's own text, which loads the model, is measured by ``bench/bench_real.py``)."""
    return [page.url_path for page in catalog.PAGES]


@dataclass
class Round:
    seconds: float
    reruns: int
    p50: float
    p95: float
    errors: list[str]
    rss_before: float
    rss_after: float
    client_cpu: float = 0.0  # CPU seconds this load tool used in the round (it must not be the bottleneck)
    server_cpu: float = 0.0
    pages: dict[str, tuple[int, float, float]] = field(default_factory=dict)  # URL path → (reruns, p50, p95)

    @property
    def throughput(self) -> float:
        return self.reruns / self.seconds if self.seconds else 0.0


def run_load(
    base: str,
    *,
    sessions: int,
    moves: int,
    rounds: int,
    think: float,
    deadline: float,
    duration: float,
    rss_pids: Sequence[int] = (),
    pages: Sequence[str] | None = None,
    seed: int = 0,
    fresh: bool = True,
    reconnect: bool = False,
    during: Callable[[list[Stats]], None] | None = None,
) -> tuple[list[Round], list[Stats]]:
    r"""Open ``sessions`` tabs at once and walk every page ``rounds`` times; return per-round and per-session data.

    ``during(stats)`` (optional) is called from a side thread while the first round runs (the scale-out runner
    kills a backend there).
    """
    require_loopback(base)
    pages = list(pages or built_paths())
    stop_at = time.monotonic() + duration
    tabs = [Session(base, deadline=deadline) for _ in range(sessions)]
    all_stats = [Stats() for _ in tabs]

    def walk_tab(i: int, r: int) -> None:
        if tabs[i].ws is None and not reconnect:
            return
        rng = random.Random(seed * 1_000_003 + (r if fresh else 0) * 10_007 + i)
        try:
            walk(
                tabs[i],
                all_stats[i],
                pages=pages,
                moves=moves,
                think=think,
                stop_at=stop_at,
                rng=rng,
                reconnect=reconnect,
            )
        except (OSError, websocket.WebSocketException):
            pass  # already recorded as an error; without --reconnect this tab stops

    open_tabs(tabs, all_stats, stop_at)
    try:
        results = [
            play_round(r, walk_tab, all_stats, rss_pids=rss_pids, stop_at=stop_at, during=during if r == 0 else None)
            for r in range(rounds)
        ]
    finally:
        for tab in tabs:
            tab.close()
    return results, all_stats


def open_tabs(tabs: Sequence[Session], all_stats: Sequence[Stats], stop_at: float) -> None:
    r"""Connect every tab at once; one that cannot connect records why and stays closed."""

    def connect(i: int) -> None:
        try:
            tabs[i].connect()
            all_stats[i].upstreams.append(tabs[i].upstream)
        except (OSError, websocket.WebSocketException) as err:
            all_stats[i].errors.append(f"connect: {type(err).__name__}: {err}")

    run_threads(connect, range(len(tabs)), stop_at)


def play_round(
    r: int,
    walk_tab: Callable[[int, int], None],
    all_stats: list[Stats],
    *,
    rss_pids: Sequence[int],
    stop_at: float,
    during: Callable[[list[Stats]], None] | None,
) -> Round:
    r"""Round ``r`` measured: every tab walks at once (``walk_tab(i, r)``, ``during`` beside them) → its reruns,
    their latency and errors (what the stats gained), the server's RSS before and after, CPU of both sides."""
    before = server_rss_mb(rss_pids)
    cpu0 = (own_cpu(), cpu_seconds(rss_pids))
    marks = [(len(s.times), len(s.errors)) for s in all_stats]
    side = None
    if during is not None:
        side = threading.Thread(target=during, args=(all_stats,), daemon=True)
        side.start()
    began = time.monotonic()
    run_threads(lambda i: walk_tab(i, r), range(len(all_stats)), stop_at)
    seconds = time.monotonic() - began
    if side is not None:
        side.join(timeout=max(0.0, stop_at - time.monotonic()))
    times = [t for s, (n, _) in zip(all_stats, marks, strict=True) for t in s.times[n:]]
    errors = [e for s, (_, n) in zip(all_stats, marks, strict=True) for e in s.errors[n:]]
    by_page: dict[str, list[float]] = {}
    for s, (n, _) in zip(all_stats, marks, strict=True):
        for path, t in zip(s.paths[n:], s.times[n:], strict=True):
            by_page.setdefault(path, []).append(t)
    return Round(
        seconds,
        len(times),
        statistics.median(times) if times else float("nan"),
        percentile(times, 0.95),
        errors,
        before,
        server_rss_mb(rss_pids),
        own_cpu() - cpu0[0],
        cpu_seconds(rss_pids) - cpu0[1],
        {path: (len(ts), statistics.median(ts), percentile(ts, 0.95)) for path, ts in by_page.items()},
    )


def run_threads(fn: Callable[[int], None], items: range, stop_at: float) -> None:
    r"""``fn(i)`` for every ``i`` at once, each in a daemon thread; waits at most until ``stop_at`` (+ 30 s)."""
    threads = [threading.Thread(target=fn, args=(i,), daemon=True) for i in items]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=max(0.0, stop_at + 30 - time.monotonic()))


def report(rounds: list[Round], *, sessions: int, pages: Sequence[str]) -> dict:
    r"""Print a table of the rounds; return the same figures as a dict (for ``--json`` and the tests)."""
    print(f"{sessions} sessions × {len(pages)} pages ({', '.join(pages)})")
    print(
        f"{'round':>5} {'reruns':>7} {'s':>7} {'rerun/s':>8} {'p50 s':>7} {'p95 s':>7} {'errors':>7} "
        f"{'RSS before':>11} {'RSS after':>10} {'CPU client':>11} {'CPU server':>11}"
    )
    for i, r in enumerate(rounds, 1):
        print(
            f"{i:>5} {r.reruns:>7} {r.seconds:>7.1f} {r.throughput:>8.1f} {r.p50:>7.3f} {r.p95:>7.3f} "
            f"{len(r.errors):>7} {r.rss_before:>9.0f}MB {r.rss_after:>8.0f}MB {r.client_cpu:>10.1f}s "
            f"{r.server_cpu:>10.1f}s"
        )
    errors = [e for r in rounds for e in r.errors]
    for e in sorted(set(errors))[:10]:
        print(f"  error ×{errors.count(e)}: {e}")
    print_pages(rounds)
    return {
        "sessions": sessions,
        "pages": list(pages),
        "rounds": [{**r.__dict__, "errors": len(r.errors), "throughput": r.throughput} for r in rounds],
        "error_samples": sorted(set(errors))[:20],
    }


#: Rounds after which the result pools (``posenc_ui.memo``, 224 MB a process) are full: until then a server grows
#: by design (five rounds of 30 students: 586 → 652 → 718 → 716 → 717 → 720 MB).
FILLING_ROUNDS = 2


def print_pages(rounds: list[Round]) -> None:
    r"""Each page's reruns, p50 and p95 in every round (the page's visit and its slider moves), slowest last round
    first: where a class's time goes."""
    if not rounds or not rounds[-1].pages:
        return
    order = sorted(rounds[-1].pages, key=lambda path: -rounds[-1].pages[path][2])
    print(f"{'page':<22}" + "".join(f"{f'round {i} p50 / p95 s':>24}" for i in range(1, len(rounds) + 1)))
    for path in order:
        cells = []
        for r in rounds:
            n, p50, p95 = r.pages.get(path, (0, float("nan"), float("nan")))
            cells.append(f"{p50:>9.3f} / {p95:.3f} ({n:>3})")
        print(f"{path:<22}" + "".join(f"{c:>24}" for c in cells))


def slow_pages(rounds: list[Round]) -> list[str]:
    r"""Pages whose p95 reached ``GOALS["page_p95_s"]`` in a round after the first (the caches warm)."""
    return sorted({p for r in rounds[1:] for p, (_, _, p95) in r.pages.items() if p95 >= GOALS["page_p95_s"]})


def goals_text() -> str:
    r"""The class's goals in words (``--check`` states them)."""
    return (
        f"goals for a class of {CLASS['sessions']} on {CLASS['processes']} processes over every page, "
        f"{CLASS['rounds']} rounds: p95 < {GOALS['p95_s']:g} s in every round, no page's p95 at or above "
        f"{GOALS['page_p95_s']:g} s from round 2 on, {GOALS['errors']} errors, RSS < {GOALS['rss_mb']:g} MB a process"
    )


def goals_met(rounds: list[Round], *, processes: int = 1, growth_mb: float = 50.0) -> list[str]:
    r"""The goals missed (empty when all hold): 0 errors, p95 in every round, every page's p95 from the second round
    on, RSS (a budget per server process), and no growth between the last two rounds once the pools have filled
    (from ``FILLING_ROUNDS + 1`` rounds on)."""
    missed = []
    if any(r.errors for r in rounds):
        missed.append("errors")
    if any(r.p95 >= GOALS["p95_s"] for r in rounds):
        missed.append(f"p95 < {GOALS['p95_s']} s")
    slow = slow_pages(rounds)
    if slow:
        missed.append(f"every page's p95 < {GOALS['page_p95_s']} s from round 2 ({', '.join(slow)})")
    if any(r.rss_after >= GOALS["rss_mb"] * processes for r in rounds):
        missed.append(f"RSS < {GOALS['rss_mb'] * processes / 1024:g} GB")
    if len(rounds) > FILLING_ROUNDS and rounds[-1].rss_after - rounds[-2].rss_after > growth_mb * processes:
        missed.append(f"RSS growth ≤ {growth_mb * processes:.0f} MB between the last two rounds")
    return missed


def tabs_per_backend(stats: Sequence[Stats]) -> dict[str, int]:
    r"""How many tabs first connected to each backend (nginx's ``X-Upstream``); empty without nginx in front."""
    first = [s.upstreams[0] for s in stats if s.upstreams and s.upstreams[0]]
    return {where: first.count(where) for where in sorted(set(first))}


def wait_quiet(pid: int, *, busy: float = 0.05, timeout: float = 180.0) -> None:
    r"""Return once process ``pid`` has used less than ``busy`` of a core over a second (a warm-up has ended)."""
    proc, deadline = psutil.Process(pid), time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.cpu_percent(interval=1.0) < 100 * busy:
            return
    raise TimeoutError(f"the server (pid {pid}) was still busy after {timeout:.0f} s")


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--url", help="a running server on loopback (default: start one)")
    ap.add_argument("--pid", type=int, action="append", default=[], help="server pid(s) whose RSS to report")
    ap.add_argument("--sessions", type=int, default=50)
    ap.add_argument("--moves", type=int, default=3, help="slider moves per page")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--think", type=float, default=1.0, help="mean seconds between a tab's actions")
    ap.add_argument("--deadline", type=float, default=15.0, help="seconds one rerun may take before it is an error")
    ap.add_argument("--duration", type=float, default=600.0, help="hard bound on the whole run, seconds")
    ap.add_argument("--pages", help="comma-separated URL paths (default: every built page)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--repeat-values",
        action="store_true",
        help="every round moves the sliders to the same values (default: fresh values each round)",
    )
    ap.add_argument(
        "--queue",
        choices=("on", "off"),
        help="the page queue of the server this starts ($POSENC_PAGE_QUEUE; default: the environment's, else on)",
    )
    ap.add_argument(
        "--processes",
        type=int,
        metavar="K",
        help="serve as `python -m posenc_ui.serve --processes K` does (nginx in front, each process "
        "warmed up first) and begin once every process is quiet",
    )
    ap.add_argument(
        "--warm",
        action="store_true",
        help="start the server as `python -m posenc_ui.serve` starts each process (the lab and every "
        "page's defaults warmed up first), and begin once it has finished (its CPU quiet)",
    )
    ap.add_argument(
        "--cold-pages",
        action="store_true",
        help="with --processes or --warm: skip the pages' warm-up (every page's defaults computed before the class; "
        "$POSENC_WARM_PAGES=off), so each page's first visit in each process is cold",
    )
    ap.add_argument("--json", type=Path, help="write the figures here")
    ap.add_argument("--check", action="store_true", help="exit 1 unless the goals hold (it prints them)")
    return ap.parse_args(argv)


@contextmanager
def served(args: argparse.Namespace) -> Iterator[tuple[str, list[int]]]:
    r"""What the run drives: (its URL, the server pids whose RSS and CPU to report). ``--url``: a running server;
    ``--processes K``: the deployment ``python -m posenc_ui.serve`` gives a class; else one ``streamlit run``."""
    if args.url is not None:
        yield args.url, args.pid
        return
    if args.queue is not None:
        os.environ[QUEUE_ENV] = args.queue  # the servers inherit this process's environment
    if args.cold_pages:
        os.environ[WARM_PAGES_ENV] = "off"
    if args.processes:
        with deployment(args.processes) as dep:
            for proc in dep.backends:
                wait_quiet(proc.pid)
            yield dep.url, [proc.pid for proc in dep.backends]
        return
    proc = start_server(free_port(), warm=args.warm)
    try:
        if args.warm:
            wait_quiet(proc.pid)
        yield f"http://127.0.0.1:{proc.args[proc.args.index('--server.port') + 1]}", [proc.pid]
    finally:
        stop_server(proc)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    pages = args.pages.split(",") if args.pages else built_paths()
    with served(args) as (base, pids):
        rounds, stats = run_load(
            base,
            sessions=args.sessions,
            moves=args.moves,
            rounds=args.rounds,
            think=args.think,
            deadline=args.deadline,
            duration=args.duration,
            rss_pids=pids,
            pages=pages,
            seed=args.seed,
            fresh=not args.repeat_values,
        )
    figures = report(rounds, sessions=args.sessions, pages=pages)
    spread = tabs_per_backend(stats)
    if spread:  # behind nginx: the slowest process sets the class's tail, so say how evenly the tabs were spread
        print("tabs per backend: " + ", ".join(f"{n} on {where}" for where, n in sorted(spread.items())))
    missed = goals_met(rounds, processes=max(1, len(pids)))
    if args.check:
        print(goals_text())
        setup = {"sessions": args.sessions, "processes": len(pids), "rounds": args.rounds}
        if setup != CLASS or pages != built_paths():
            print(f"  (this run: {setup}, {len(pages)} of {len(built_paths())} pages: not the class the goals name)")
    print("goals met" if not missed else f"goals missed: {', '.join(missed)}")
    if args.json:
        figures = {**figures, "processes": len(pids), "tabs_per_backend": spread, "missed": missed}
        args.json.write_text(json.dumps(figures, indent=2))
    return 1 if args.check and missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
