r"""Scale-out past one process: K Streamlit backends behind nginx (tabs dealt in turn, sticky by cookie), on loopback.

    python bench/scaleout/run.py [--ks 1,2] [--sessions 40] [--moves 2] [--kill-after 8]

For each K it starts the deployment ``python -m posenc_ui.serve`` gives a class (:func:`posenc_ui.serve.deployment`:
K ``streamlit run app.py`` on free loopback ports, nginx from its template in a temp folder), drives it with
``bench/load.py`` (closed loop, no think time: the throughput a saturated deployment reaches, reruns/s) and stops
everything. Then, with K = 2 and ``--think`` seconds between actions, it kills one backend (SIGKILL) ``--kill-after``
seconds into the run: sessions on the other backend must see no error, and the tabs that lost theirs must reconnect
through nginx onto the live one and carry on (here nothing starts the killed one again, as the command would).
Everything it starts it stops (``finally``), and it only ever listens and connects on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import load  # noqa: E402

from posenc_ui.serve import deployment  # noqa: E402


def throughput(ks: list[int], args: argparse.Namespace) -> list[dict]:
    rows = []
    for k in ks:
        with deployment(k) as dep:
            url, backends = dep.url, dep.backends
            load.run_load(
                url,
                sessions=min(args.sessions, 10),
                moves=1,
                rounds=1,
                think=0.0,
                deadline=args.deadline,
                duration=60,
                pages=args.pages,
            )  # warm-up: imports, caches of every backend
            rounds, stats = load.run_load(
                url,
                sessions=args.sessions,
                moves=args.moves,
                rounds=1,
                think=0.0,
                deadline=args.deadline,
                duration=args.duration,
                rss_pids=[p.pid for p in backends],
                pages=args.pages,
            )
        (r,) = rounds
        first = [s.upstreams[0] for s in stats if s.upstreams]
        spread = {u: first.count(u) for u in sorted(set(first))}
        rows.append(
            {
                "k": k,
                "reruns": r.reruns,
                "seconds": r.seconds,
                "reruns_per_s": r.throughput,
                "p50": r.p50,
                "p95": r.p95,
                "errors": len(r.errors),
                "rss_mb": r.rss_after,
                "per_backend": spread,
            }
        )
        print(
            f"K={k}: {r.throughput:.1f} reruns/s ({r.reruns} in {r.seconds:.1f} s), p50 {r.p50:.3f} s, "
            f"p95 {r.p95:.3f} s, errors {len(r.errors)}, RSS {r.rss_after:.0f} MB, sessions {spread}"
        )
    return rows


def kill_one(args: argparse.Namespace) -> dict:
    r"""K = 2 under load; one backend is killed mid-run. Who noticed, who reconnected, where to."""
    record: dict = {}
    with deployment(2) as dep:
        url = dep.url
        ports = {f"127.0.0.1:{port}": proc for port, proc in zip(dep.ports, dep.backends, strict=True)}

        def kill(all_stats: list[load.Stats]) -> None:
            time.sleep(args.kill_after)
            victim = next(iter(ports))
            record["victim"], record["killed_at"] = victim, time.monotonic()
            record["on_victim"] = [i for i, s in enumerate(all_stats) if s.upstreams[:1] == [victim]]
            record["nginx_log"] = (dep.run / "error.log").read_text(errors="replace").splitlines()[-20:]
            ports[victim].kill()
            ports[victim].wait()

        load.run_load(
            url,
            sessions=min(args.sessions, 10),
            moves=1,
            rounds=1,
            think=0.0,
            deadline=args.deadline,
            duration=60,
            pages=args.pages,
        )
        rounds, stats = load.run_load(
            url,
            sessions=args.sessions,
            moves=args.moves,
            rounds=1,
            think=args.think,
            deadline=args.deadline,
            duration=args.duration,
            pages=args.pages,
            reconnect=True,
            during=kill,
        )
    victim, killed_at, hit = record["victim"], record["killed_at"], set(record["on_victim"])
    others = [s for i, s in enumerate(stats) if i not in hit]
    moved = [stats[i] for i in hit]
    result = {
        "sessions": args.sessions,
        "victim": victim,
        "sessions_on_victim": len(hit),
        "errors_on_survivor": sum(len(s.errors) for s in others),
        "reruns_on_survivor_after_kill": sum(1 for s in others for t, _ in s.log if t > killed_at),
        "errors_on_victim_tabs": sum(len(s.errors) for s in moved),
        "victim_tabs_reconnected": sum(1 for s in moved if s.reconnects),
        "reconnected_onto": sorted({u for s in moved for u in s.upstreams[1:]}),
        "victim_tabs_ok_after_reconnect": sum(1 for s in moved if any(t > killed_at and ok == "ok" for t, ok in s.log)),
        "p95": rounds[0].p95,
        "nginx_log_before_kill": record["nginx_log"],  # a backend nginx took out of the ring gets no new session
    }
    result["passed"] = (
        result["errors_on_survivor"] == 0
        and result["reruns_on_survivor_after_kill"] > 0
        and result["victim_tabs_reconnected"] == len(hit) > 0
        and result["victim_tabs_ok_after_reconnect"] == len(hit)
        and victim not in result["reconnected_onto"]
    )
    print(f"kill one of 2 backends after {args.kill_after:.0f} s: " + json.dumps(result))
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ks", default="1,2", help="backend counts to measure, comma-separated")
    ap.add_argument("--sessions", type=int, default=40)
    ap.add_argument("--moves", type=int, default=2)
    ap.add_argument("--think", type=float, default=0.5, help="seconds between actions in the kill test")
    ap.add_argument("--kill-after", type=float, default=8.0)
    ap.add_argument("--deadline", type=float, default=20.0)
    ap.add_argument("--duration", type=float, default=180.0, help="bound on each load run, seconds")
    ap.add_argument("--pages", help="comma-separated URL paths (default: every built page)")
    ap.add_argument("--no-kill", action="store_true")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    args.pages = args.pages.split(",") if args.pages else None
    out = {"throughput": throughput([int(k) for k in args.ks.split(",")], args)}
    if not args.no_kill:
        out["kill_one"] = kill_one(args)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))
    rates = [row["reruns_per_s"] for row in out["throughput"]]
    grows = all(b > a for a, b in itertools.pairwise(rates))
    print("throughput grows with K" if grows else "throughput does NOT grow with K")
    return 0 if grows and out.get("kill_one", {"passed": True})["passed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
