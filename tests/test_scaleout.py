r"""Serving a class (``python -m posenc_ui.serve``, and ``bench/scaleout/`` on the same deployment) in CI.

Two backends behind nginx, one killed mid-run: sessions on the surviving backend must not notice; the tabs that lost
theirs must reconnect through nginx onto the live one and carry on; nginx's route cookie must have spread the class
over both backends. The command itself: it serves through nginx, starts a killed backend again on its port, and
stops everything on SIGTERM. Needs nginx (Debian package; ``.ci/run`` installs it); elsewhere these tests are
skipped with that reason, in CI they must run.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable

import psutil
import pytest

from posenc_ui import catalog
from posenc_ui.frame.chart import plotly_module
from posenc_ui.serve import deployment, find_nginx, free_port

ROOT = catalog.ROOT
_spec = importlib.util.spec_from_file_location("posenc_bench_scaleout", ROOT / "bench" / "scaleout" / "run.py")
scaleout = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = scaleout
_spec.loader.exec_module(scaleout)
Session = scaleout.load.Session  # one browser tab over Streamlit's protocol (bench/load_session.py)

HAS_NGINX = find_nginx() is not None
pytestmark = pytest.mark.skipif(
    not HAS_NGINX and os.environ.get("CI") != "true", reason="nginx is not installed (apt-get install -y nginx)"
)


def test_two_backends_behind_nginx_lose_one_and_no_session_is_lost() -> None:
    pages = [page.url_path for page in catalog.PAGES][:3]
    sessions = 16
    args = argparse.Namespace(
        sessions=sessions, moves=2, think=0.5, kill_after=2.5, deadline=20.0, duration=60.0, pages=pages
    )
    result = scaleout.kill_one(args)
    # the class is spread over both backends (how evenly: the test below)
    assert 0 < result["sessions_on_victim"] < sessions, result["nginx_log_before_kill"]
    assert result["errors_on_survivor"] == 0 and result["reruns_on_survivor_after_kill"] > 0
    assert result["victim_tabs_reconnected"] == result["sessions_on_victim"]
    assert result["victim_tabs_ok_after_reconnect"] == result["sessions_on_victim"]
    assert result["reconnected_onto"] and result["victim"] not in result["reconnected_onto"]
    assert result["passed"]


def test_tabs_are_dealt_to_the_backends_in_turn_stay_on_theirs_and_move_when_it_dies() -> None:
    """nginx's routing, tab by tab. Only a request without a route cookie (a tab's first) goes through the upstream
    group, whose backends take such requests in turn (round robin): so 2k tabs sit k on each backend, exactly, however
    they arrive. A tab's cookie names its backend, and its requests go there whatever the counts; once that backend is
    gone, the tab's next request goes to the live one and the cookie follows."""
    tabs = []
    with deployment(2, warm=False) as dep:
        try:
            for _ in range(10):
                tab = Session(dep.url, deadline=30)
                tab.connect()  # GET / (cookies kept), then the websocket, which stays open
                tabs.append(tab)
            where = [tab.upstream for tab in tabs]
            assert sorted(where.count(f"127.0.0.1:{port}") for port in dep.ports) == [5, 5], where
            assert all(tab.cookies["posenc_route"] == tab.upstream for tab in tabs)

            # an eleventh tab whose cookie names the first backend goes there, though it then holds six tabs to five
            first = f"127.0.0.1:{dep.ports[0]}"
            again = Session(dep.url, deadline=30)
            again.cookies["posenc_route"] = first
            again.connect()
            tabs.append(again)
            assert again.upstream == first

            dep.backends[0].kill()
            dep.backends[0].wait()
            moved = Session(dep.url, deadline=30)
            moved.cookies["posenc_route"] = first
            moved.connect()  # nginx cannot reach the first backend: the tab lands on the second, cookie and all
            tabs.append(moved)
            second = f"127.0.0.1:{dep.ports[1]}"
            assert moved.upstream.split(", ")[-1] == second and moved.cookies["posenc_route"] == second
        finally:
            for tab in tabs:
                tab.close()


def test_nginx_sends_plotly_js_compressed_and_still_cached_for_a_year() -> None:
    with deployment(1) as dep:
        path = f"{dep.url}/static/js/{plotly_module()}"
        with urllib.request.urlopen(urllib.request.Request(path), timeout=30) as plain:
            body = plain.read()
            assert plain.headers.get("Content-Encoding") is None  # a client that asks for nothing gets the file
        request = urllib.request.Request(path, headers={"Accept-Encoding": "gzip"})
        with urllib.request.urlopen(request, timeout=30) as packed:
            assert packed.headers["Content-Encoding"] == "gzip"
            assert "immutable" in packed.headers["Cache-Control"]
            sent = packed.read()
    assert gzip.decompress(sent) == body
    assert len(body) > 4_000_000 and len(sent) < 0.4 * len(body)  # plotly.js: 4.7 MB, 1.70 MB at gzip level 1


def _children(proc: subprocess.Popen) -> dict[str, psutil.Process]:
    r"""The launcher's Streamlit backends by port, and its nginx (key ``"nginx"``)."""
    found: dict[str, psutil.Process] = {}
    for child in psutil.Process(proc.pid).children():
        try:
            cmd = child.cmdline()
        except psutil.Error:  # gone, or killed and not yet reaped by the launcher
            continue
        if "--server.port" in cmd:
            found[cmd[cmd.index("--server.port") + 1]] = child
        elif cmd and "nginx" in cmd[0]:
            found["nginx"] = child
    return found


def _until(condition: Callable[[], bool], seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"not within {seconds:.0f} s: {what}"
        time.sleep(0.2)


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=1) as resp:
            return resp.status == 200
    except OSError:
        return False


def test_serve_command_serves_through_nginx_starts_a_dead_backend_again_and_stops_on_sigterm() -> None:
    port = free_port()
    cmd = [sys.executable, "-m", "posenc_ui.serve", "--processes", "2", "--address", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _until(lambda: _answers(url), 120, "the class URL answers")
        with urllib.request.urlopen(url, timeout=10) as resp:
            assert resp.status == 200 and "posenc_route=" in resp.headers["Set-Cookie"]
        first = _children(proc)
        backends = sorted(name for name in first if name != "nginx")
        assert len(backends) == 2 and "nginx" in first
        victim = first[backends[0]]
        victim.kill()
        _until(
            lambda: (
                (new := _children(proc).get(backends[0])) is not None
                and new.pid != victim.pid
                and _answers(f"http://127.0.0.1:{backends[0]}")
            ),
            90,
            "the killed backend is started again",
        )
        started = _children(proc)
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 0, out
    assert f"the process on port {backends[0]} exited" in out and out.rstrip().endswith("posenc: stopped")
    for child in started.values():  # nothing left behind
        assert not child.is_running() or child.status() == psutil.STATUS_ZOMBIE


#: An environment variable that marks the processes one test started (children inherit it).
TAG = "POSENC_TEST_TAG"


def _tagged(tag: str) -> set[int]:
    r"""The pids of every process on this machine whose environment carries ``tag``: what a command started with it
    left running (its backends, nginx). Other tests, on other workers, start and stop deployments of their own
    meanwhile; counting every backend on the machine made the test below fail when one of theirs stopped."""
    found = set()
    for proc in psutil.process_iter():
        try:
            if proc.environ().get(TAG) == tag:
                found.add(proc.pid)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            continue
    return found


def test_serve_command_on_a_port_already_taken_says_so_and_leaves_nothing_running() -> None:
    with deployment(1) as dep:  # nginx listens on this port already
        taken = dep.url.rsplit(":", 1)[1]
        tag = f"port-taken-{os.getpid()}-{time.monotonic_ns()}"
        cmd = [sys.executable, "-m", "posenc_ui.serve", "--processes", "1", "--address", "127.0.0.1", "--port", taken]
        env = {**os.environ, TAG: tag}
        proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            _, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        left = _tagged(tag)
    assert proc.returncode == 1 and "Traceback" not in err
    assert f"cannot listen on 127.0.0.1:{taken}: Address already in use" in err
    assert left == set()  # the process the command had started is gone with it


def test_the_tag_finds_what_a_deployment_started_while_it_runs() -> None:
    r"""The check above can fail: a deployment started with the tag in its environment is found while it runs (this
    process's own environment, as /proc shows it, is the one it started with: it never carries the tag)."""
    tag = f"running-{os.getpid()}-{time.monotonic_ns()}"
    os.environ[TAG] = tag
    try:
        with deployment(1, warm=False) as dep:
            running = _tagged(tag)
            assert {proc.pid for proc in dep.backends} <= running and os.getpid() not in running
    finally:
        del os.environ[TAG]
    assert _tagged(tag) == set()


def _get(url: str) -> tuple[int, str]:
    r"""Status and body of a GET, whatever the status."""
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode("utf-8", "replace")


def test_a_link_too_long_for_the_server_gets_a_page_saying_so_in_both_languages() -> None:
    from posenc_ui.i18n import t
    from posenc_ui.serve import LINK_KB

    with deployment(1, warm=False) as dep:
        page = f"{dep.url}/{catalog.BY_ID['extension'].url_path}?config="
        status, body = _get(page + "x" * (LINK_KB * 1024 + 6 * 1024))  # past nginx's limit, under Streamlit's own
        assert status == 414
        for lang in ("zh", "en"):
            assert t("serve.link_too_long_title", lang) in body
            assert t("serve.link_too_long", lang, limit=LINK_KB) in body
        assert "Invalid HTTP request" not in body
        status, body = _get(page + "x" * ((LINK_KB - 8) * 1024))  # a long link inside the limit reaches the app
        assert status == 200 and t("serve.link_too_long_title", "en") not in body
        status, _ = _get(page + "x" * (200 * 1024))  # far past it: the same page, not a dropped connection
        assert status == 414
