r"""Start and stop a real ``streamlit run app.py`` on a free loopback port (used by the e2e tests and bench)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the bench scripts load this file before the app's packages

from posenc_ui.serve import free_port, start_backend, stop  # noqa: E402

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "ROOT", "free_port", "start_server", "stop_server"]

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


def start_server(
    port: int, *, timeout: float = 60.0, script: str = "app.py", env: dict[str, str] | None = None, warm: bool = False
) -> subprocess.Popen:
    r"""``streamlit run <script>`` on 127.0.0.1:``port`` with the classroom settings
    (:func:`posenc_ui.serve.start_backend`); ``env``: variables added to this process's; ``warm``: the lab warmed up
    as the process starts, as ``python -m posenc_ui.serve`` starts each of its processes."""
    return start_backend(port, script=script, env=env, timeout=timeout, warm=warm)


def stop_server(proc: subprocess.Popen) -> None:
    r"""Terminate the server started by :func:`start_server` (this process only) and wait for it."""
    stop(proc)
