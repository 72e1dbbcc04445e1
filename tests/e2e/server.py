r"""Start and stop a real ``streamlit run app.py`` on a free loopback port (used by the e2e tests and bench)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
#: Without the networking flags Chromium floods the closed network; see docs/streamlit.md, "Headless Chromium".
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


#: What the README's classroom command sets: glibc gives each of Streamlit's rerun threads a malloc arena of its
#: own (up to 8 per core) and rarely returns their freed memory; with 2, RSS stops climbing between rounds of 50
#: students (bench/load.py: +245 MB a round by default, +22 MB with 2). Read only at process start.
CLASSROOM_ENV = {"MALLOC_ARENA_MAX": "2"}


def free_port() -> int:
    r"""A TCP port nobody listens on right now (loopback only)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_server(
    port: int, *, timeout: float = 60.0, script: str = "app.py", env: dict[str, str] | None = None
) -> subprocess.Popen:
    r"""``streamlit run <script>`` on 127.0.0.1:``port`` (``env``: variables added to this process's); returns once
    ``/_stcore/health`` answers."""
    cmd = [
        sys.executable, "-m", "streamlit", "run", script,
        "--server.port", str(port), "--server.address", "127.0.0.1",
        "--server.headless", "true", "--browser.gatherUsageStats", "false",  # the rest: .streamlit/config.toml
    ]  # fmt: skip
    env = {**CLASSROOM_ENV, **os.environ, **(env or {})}
    # Its log goes to a file, not a pipe: nobody reads a pipe while the server runs, and a server that wrote 64 kB
    # into one would block mid-rerun.
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=log, env=env)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            log.seek(0)
            raise RuntimeError(f"streamlit exited early: {log.read().decode(errors='replace')[-2000:]}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1) as resp:
                if resp.status == 200:
                    return proc
        except OSError:
            time.sleep(0.2)
    stop_server(proc)
    raise TimeoutError(f"streamlit did not answer on port {port} within {timeout} s")


def stop_server(proc: subprocess.Popen) -> None:
    r"""Terminate the server started by :func:`start_server` (this process only) and wait for it."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
