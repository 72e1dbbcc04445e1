r"""``python -m posenc_ui.serve``: the app for a class, K Streamlit processes behind nginx, until Ctrl-C or SIGTERM."""

from __future__ import annotations

import argparse
import ipaddress
import os
import signal
import sys
import threading
from collections.abc import Sequence

from . import deployment, find_nginx, supervise

#: bench/load.py, 2026-11-26, one warm process on 2 cores: p95 0.47-0.83 s at 20 students, 0.66-0.77 s at 25, 1.8-2.1 s
#: at 35. Fifty students on those 2 cores: p95 0.76-1.61 s with two processes, 0.69-1.28 s with three
#: (docs/benchmarks.md).
STUDENTS_PER_PROCESS = 20


def default_processes() -> int:
    r"""One process per core: on 2 cores, a third process did not lower the p95 of 50 students (the median round
    1.03 s with three, 1.04 s with two) and cost another ~700 MB."""
    return os.cpu_count() or 1


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(
        prog="python -m posenc_ui.serve",
        description="The app for a class: K Streamlit processes behind nginx, until Ctrl-C or SIGTERM.",
    )
    ap.add_argument(
        "--processes",
        type=int,
        default=default_processes(),
        help=f"Streamlit processes (default: one per core, {default_processes()} here); "
        f"about one per {STUDENTS_PER_PROCESS} students",
    )
    ap.add_argument("--address", default="0.0.0.0", help="where nginx listens (default: every interface)")
    ap.add_argument("--port", type=int, default=8501, help="nginx's port (default: 8501, Streamlit's own)")
    ap.add_argument("--nginx", help="the nginx executable (default: nginx on the PATH, else /usr/sbin/nginx)")
    args = ap.parse_args(argv)
    if not 1 <= args.processes <= 64:
        ap.error(f"--processes must be between 1 and 64, got {args.processes}")
    if not 1 <= args.port <= 65535:
        ap.error(f"--port must be between 1 and 65535, got {args.port}")
    try:  # it goes into nginx's configuration as it is: an address, nothing else
        ipaddress.ip_address(args.address)
    except ValueError:
        ap.error(f"--address must be an IP address (0.0.0.0: every interface), got {args.address!r}")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    if find_nginx(args.nginx) is None:
        print(
            "posenc: nginx is not installed (apt-get install -y nginx); without it, one process serves the app: "
            "MALLOC_ARENA_MAX=2 streamlit run app.py --server.address 0.0.0.0",
            file=sys.stderr,
        )
        return 2
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    try:
        with deployment(args.processes, address=args.address, port=args.port, nginx=args.nginx) as dep:
            backends = ", ".join(map(str, dep.ports))
            print(
                f"posenc: {args.processes} process(es) behind nginx at http://{args.address}:{args.port} "
                f"(backends on 127.0.0.1:{backends}); Ctrl-C stops them all",
                flush=True,
            )
            supervise(dep, done, say=lambda line: print(line, flush=True))
    except (OSError, RuntimeError, TimeoutError) as err:  # a port taken, nginx refusing its configuration, …
        print(f"posenc: {err}", file=sys.stderr)
        return 1
    print("posenc: stopped", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
