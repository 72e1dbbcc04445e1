r"""The scale-out recipe (``bench/scaleout/``) in CI: two backends behind nginx, one killed mid-run.

Sessions on the surviving backend must not notice; the tabs that lost theirs must reconnect through nginx onto the
live one and carry on; nginx's route cookie must have spread the class over both backends. Needs nginx (Debian
package; ``.ci/run`` installs it); elsewhere the test is skipped with that reason, in CI it must run.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import os
import sys
import urllib.request

import pytest

from posenc_ui import catalog
from posenc_ui.frame.chart import plotly_module

ROOT = catalog.ROOT
_spec = importlib.util.spec_from_file_location("posenc_bench_scaleout", ROOT / "bench" / "scaleout" / "run.py")
scaleout = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = scaleout
_spec.loader.exec_module(scaleout)

HAS_NGINX = os.access(scaleout.NGINX, os.X_OK)
pytestmark = pytest.mark.skipif(
    not HAS_NGINX and os.environ.get("CI") != "true", reason="nginx is not installed (apt-get install -y nginx)"
)


def test_two_backends_behind_nginx_lose_one_and_no_session_is_lost() -> None:
    pages = [page.url_path for page in catalog.PAGES][:3]
    sessions = 12  # all on one backend by chance: 2 · 2⁻¹² ≈ 0.05 %
    args = argparse.Namespace(sessions=sessions, moves=2, think=0.5, kill_after=2.5, deadline=20.0, duration=60.0,
                              pages=pages)  # fmt: skip
    result = scaleout.kill_one(args)
    assert 0 < result["sessions_on_victim"] < sessions  # the route cookie spread the class over both backends
    assert result["errors_on_survivor"] == 0 and result["reruns_on_survivor_after_kill"] > 0
    assert result["victim_tabs_reconnected"] == result["sessions_on_victim"]
    assert result["victim_tabs_ok_after_reconnect"] == result["sessions_on_victim"]
    assert result["reconnected_onto"] and result["victim"] not in result["reconnected_onto"]
    assert result["passed"]


def test_nginx_sends_plotly_js_compressed_and_still_cached_for_a_year() -> None:
    with scaleout.deployment(1) as (url, _backends):
        path = f"{url}/static/js/{plotly_module()}"
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
