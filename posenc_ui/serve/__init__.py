r"""Serving a class: K Streamlit processes of the app on loopback, nginx in front, one browser tab per process.

    python -m posenc_ui.serve [--processes K] [--address 0.0.0.0] [--port 8501]

Why more than one process: a Streamlit server runs its Python on one core at a time (the interpreter lock), and a
class moving sliders keeps that core busy. Measured with ``bench/load.py`` (every student moves a slider about once
a second), one process answers about 20-25 students with a p95 near 1 s; past that, reruns queue. So a class of N
wants about N / 20 processes, each with a core of its own, and a core left for nginx.

nginx (the Debian package) sends each tab's first request to the processes in turn, so a class is spread evenly,
and every later request of the tab to the same process by a route cookie it writes itself
(:data:`TEMPLATE` says how); it passes websockets through and compresses the static files (plotly.js: 4.7 MB → 1.7 MB).
Each backend warms the lab up as it starts (:mod:`.backend`), before the class arrives. A backend that dies loses
only the rerun in flight: its tabs reconnect through nginx onto a live one, and :func:`supervise` starts a new process
on the dead one's port. The same :func:`deployment` runs in ``bench/scaleout/run.py``, ``bench/load.py --processes``
and ``tests/test_scaleout.py``, so what is measured and tested is what a class gets.
"""

from __future__ import annotations

import html
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ..i18n import LANGS, t
from ..paths import ROOT

TEMPLATE = Path(__file__).with_name("nginx.conf.template")

#: What every server the app starts sets (the README's classroom command too): glibc gives each of Streamlit's rerun
#: threads a malloc arena of its own (up to 8 per core) and rarely returns their freed memory; with 2, RSS stops
#: climbing between rounds of 50 students (bench/load.py: +245 MB a round by default, +22 MB with 2). Read only at
#: process start.
CLASSROOM_ENV = {"MALLOC_ARENA_MAX": "2"}


def free_port() -> int:
    r"""A TCP port nobody listens on right now (loopback only)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def backend_command(port: int, script: str = "app.py", *, warm: bool = False) -> list[str]:
    r"""``streamlit run <script>`` on 127.0.0.1:``port``; its other settings come from ``.streamlit/config.toml``.
    ``warm``: through :mod:`.backend`, which starts the lab's warm-up before the server."""
    runner = ["-m", "posenc_ui.serve.backend"] if warm else ["-m", "streamlit", "run"]
    return [
        sys.executable,
        *runner,
        script,
        "--server.port",
        str(port),
        "--server.address",
        "127.0.0.1",
        "--server.headless",
        "true",
        "--browser.gatherUsageStats",
        "false",
    ]


def wait_healthy(url: str, proc: subprocess.Popen, *, timeout: float, what: str) -> None:
    r"""Return once ``url``'s ``/_stcore/health`` answers 200; raise if ``proc`` exits first or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited early (status {proc.returncode})")
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as resp:
                if resp.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"{what} did not answer at {url} within {timeout:.0f} s")


def start_backend(
    port: int,
    *,
    script: str = "app.py",
    warm: bool = False,
    env: Mapping[str, str] | None = None,
    timeout: float = 60.0,
) -> subprocess.Popen:
    r"""A Streamlit process of the app on 127.0.0.1:``port`` (``warm``: see :func:`backend_command`; ``env``: variables
    added to this process's); returns once it answers. Its log goes to a file, not a pipe: nobody reads a pipe while
    the server runs, and a server that wrote 64 kB into one would block mid-rerun."""
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen(
        backend_command(port, script, warm=warm),
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=log,
        env={**CLASSROOM_ENV, **os.environ, **(env or {})},
    )
    started(proc, log, f"http://127.0.0.1:{port}", timeout=timeout, what=f"streamlit on port {port}")
    return proc


def started(proc: subprocess.Popen, log: IO[bytes], url: str, *, timeout: float, what: str) -> None:
    r"""Wait until ``proc`` answers at ``url``; if it does not, stop it and raise with the end of its ``log``."""
    try:
        wait_healthy(url, proc, timeout=timeout, what=what)
    except (RuntimeError, TimeoutError) as err:
        stop(proc)
        log.seek(0)
        raise RuntimeError(f"{err}: {log.read().decode(errors='replace')[-2000:]}") from None


def stop(proc: subprocess.Popen) -> None:
    r"""Terminate ``proc`` (this process only), kill it if it has not gone after 10 s, and wait for it."""
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def require_free(address: str, port: int) -> None:
    r"""Raise :class:`OSError` unless ``address``:``port`` can be listened on (as nginx binds it: address reuse on)."""
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with socket.socket(family) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((address, port))
        except OSError as err:
            raise OSError(f"cannot listen on {address}:{port}: {err.strerror}") from None


def find_nginx(path: str | None = None) -> str | None:
    r"""The nginx executable: ``path`` if given, else ``nginx`` on the PATH, else Debian's ``/usr/sbin/nginx``."""
    for candidate in (path,) if path else (shutil.which("nginx"), "/usr/sbin/nginx"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


#: The longest request line (the link) nginx reads, in kB: under the 64 KiB Streamlit's server (tornado) reads for the
#: request line and every header together, with room for a browser's headers and cookies.
LINK_KB = 60
#: The page nginx answers a longer link with (a file of the run folder, written by :func:`write_pages`).
LINK_PAGE = "posenc-link-too-long.html"


def nginx_conf(run: Path, listen: str, ports: list[int]) -> str:
    r"""The nginx configuration: :data:`TEMPLATE` with its temp folder, listening address, backends and link limit
    filled in."""
    servers = "\n".join(f"        server 127.0.0.1:{p} max_fails=1 fail_timeout=10s;" for p in ports)
    routes = "\n".join(f'        "127.0.0.1:{p}" 127.0.0.1:{p};' for p in ports)
    conf = TEMPLATE.read_text(encoding="utf-8")
    filled = {
        "{{RUN}}": str(run),
        "{{LISTEN}}": listen,
        "{{SERVERS}}": servers,
        "{{ROUTES}}": routes,
        "{{LINK_KB}}": str(LINK_KB),
    }
    for placeholder, value in filled.items():
        conf = conf.replace(placeholder, value)
    return conf


def link_too_long_page() -> str:
    r"""The HTML nginx answers a link longer than :data:`LINK_KB` kB with: what happened, in every language."""
    parts = []
    for lang in LANGS:
        title = html.escape(t("serve.link_too_long_title", lang))
        body = html.escape(t("serve.link_too_long", lang, limit=LINK_KB))
        home = html.escape(t("serve.link_too_long_home", lang))
        parts.append(f'<section lang="{lang}"><h1>{title}</h1><p>{body}</p><p><a href="/">{home}</a></p></section>')
    return (
        '<!doctype html><html><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{html.escape(t('serve.link_too_long_title', 'en'))}</title>"
        "<style>body{font-family:sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem;line-height:1.5}"
        "section+section{border-top:1px solid;margin-top:1.5rem}</style></head><body>"
        + "".join(parts)
        + "</body></html>\n"
    )


def write_pages(run: Path) -> None:
    r"""The pages nginx serves by itself (:data:`LINK_PAGE`) into ``run``/pages, readable by nginx's workers (which
    run as another user when nginx is started as root: the run folder is opened for them to pass through, not to
    list)."""
    pages = run / "pages"
    pages.mkdir(exist_ok=True)
    (pages / LINK_PAGE).write_text(link_too_long_page(), encoding="utf-8")
    pages.chmod(0o755)
    (pages / LINK_PAGE).chmod(0o644)
    run.chmod(0o711)


@dataclass
class Deployment:
    r"""A running deployment: the URL nginx answers on, the backends (one per port), nginx, whether backends warm up,
    and nginx's folder (its ``error.log`` says when it took a backend out of the ring, and why)."""

    url: str
    ports: list[int]
    backends: list[subprocess.Popen]
    nginx: subprocess.Popen
    warm: bool
    run: Path


@contextmanager
def deployment(
    processes: int,
    *,
    address: str = "127.0.0.1",
    port: int | None = None,
    nginx: str | None = None,
    warm: bool = True,
) -> Iterator[Deployment]:
    r"""``processes`` backends on free loopback ports and nginx on ``address``:``port`` (a free loopback port by
    default) in front of them; yields once nginx answers, and stops everything on the way out. ``warm``: each backend
    warms the lab up as it starts (:mod:`.backend`)."""
    executable = find_nginx(nginx)
    if executable is None:
        raise FileNotFoundError("nginx is not installed (apt-get install -y nginx)")
    ports = [free_port() for _ in range(processes)]
    backends: list[subprocess.Popen] = []  # the deployment's own list: what supervise() starts again is stopped too
    proxy: subprocess.Popen | None = None
    port = port or free_port()
    require_free(address, port)  # first: another server there would answer the health check meant for nginx
    run = Path(tempfile.mkdtemp(prefix="posenc-nginx-"))
    try:
        for backend_port in ports:
            backends.append(start_backend(backend_port, warm=warm))
        listen = f"[{address}]:{port}" if ":" in address else f"{address}:{port}"
        (run / "nginx.conf").write_text(nginx_conf(run, listen, ports), encoding="utf-8")
        write_pages(run)
        log = tempfile.TemporaryFile()
        proxy = subprocess.Popen(
            [executable, "-p", str(run), "-c", str(run / "nginx.conf"), "-g", "daemon off;"],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        local = "127.0.0.1" if address in ("0.0.0.0", "::") else address
        url = f"http://{f'[{local}]' if ':' in local else local}:{port}"
        started(proxy, log, url, timeout=20, what=f"nginx on {listen}")
        yield Deployment(url, ports, backends, proxy, warm, run)
    finally:
        for proc in [proxy, *backends]:
            if proc is not None:
                stop(proc)
        shutil.rmtree(run, ignore_errors=True)


def supervise(
    dep: Deployment, done: threading.Event, *, every: float = 1.0, say: Callable[[str], None] = print
) -> None:
    r"""Until ``done`` is set: a backend that has exited is started again on its port (nginx's list of backends is
    fixed), and nginx exiting ends the deployment with an error."""
    while not done.wait(every):
        if dep.nginx.poll() is not None:
            raise RuntimeError(f"nginx exited (status {dep.nginx.returncode})")
        for i, proc in enumerate(dep.backends):
            if proc.poll() is not None:
                say(f"posenc: the process on port {dep.ports[i]} exited (status {proc.returncode}); starting it again")
                dep.backends[i] = start_backend(dep.ports[i], warm=dep.warm)
