r"""``python -m posenc_ui.serve`` without nginx, and the warm backend it starts (the deployment itself, behind nginx,
is tested in ``tests/test_scaleout.py``)."""

from __future__ import annotations

import subprocess
import sys
import time

from posenc_ui import catalog
from posenc_ui.serve import free_port, start_backend, stop

ROOT = catalog.ROOT


def _has_torch(pid: int) -> bool:
    r"""Whether process ``pid`` has torch's C++ library mapped (it has imported torch)."""
    with open(f"/proc/{pid}/maps", encoding="utf-8") as maps:
        return "libtorch_cpu" in maps.read()


def test_a_warm_backend_imports_torch_before_any_student_arrives_and_a_plain_one_does_not() -> None:
    warm, plain = start_backend(free_port(), warm=True), start_backend(free_port())
    try:
        deadline = time.monotonic() + 90
        while not _has_torch(warm.pid):  # no session has opened: only the warm-up can have imported it
            assert time.monotonic() < deadline, "the warm backend had not imported torch after 90 s"
            time.sleep(0.5)
        assert not _has_torch(plain.pid)
        assert warm.poll() is None
    finally:
        stop(warm)
        stop(plain)


def test_serve_command_without_nginx_says_how_to_get_it() -> None:
    missing = [sys.executable, "-m", "posenc_ui.serve", "--nginx", str(ROOT / "no-such-nginx")]
    done = subprocess.run(missing, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "apt-get install -y nginx" in done.stderr and "streamlit run app.py" in done.stderr
    wrong = subprocess.run([*missing[:3], "--processes", "0"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert wrong.returncode == 2 and "--processes must be between 1 and 64, got 0" in wrong.stderr
    injected = subprocess.run(
        [*missing[:3], "--address", "0.0.0.0:80; include /etc/passwd"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert injected.returncode == 2 and "--address must be an IP address" in injected.stderr


def test_the_page_warm_up_computes_every_cached_recipe_at_its_defaults_in_each_language() -> None:
    r"""``warm_pages`` (run before a class arrives): each cached figure and check once per language, at the defaults;
    a refused recipe is skipped, and an uncached one (``reads``) is left for the page to run."""
    from types import SimpleNamespace

    from posenc_core import PosEncError
    from posenc_ui.lesson import reads, uses
    from posenc_ui.serve.backend import warm_pages
    from posenc_ui.state import IntParam

    seen: list[tuple] = []

    @uses("n")
    def figure(v, lang: str) -> str:
        seen.append(("figure", v["n"], lang))
        return lang

    @uses("n")
    def refused(v, lang: str) -> str:
        raise PosEncError("no")

    @reads("n")
    def live(v, lang: str) -> str:
        seen.append(("live", v["n"], lang))
        return lang

    @uses()
    def check(v) -> str:
        seen.append(("check",))
        return "ok"

    view = SimpleNamespace(
        params=(IntParam("n", 7, lo=1, hi=9),),
        figures={"a": figure, "b": refused, "c": live},
        checks={"d": check},
    )
    assert warm_pages([view], ("en", "zh")) == 4  # figure and check in each language
    assert seen == [("figure", 7, "en"), ("check",), ("figure", 7, "zh")]  # the check reads nothing: once


def test_the_page_warm_up_leaves_the_real_model_to_its_first_visit() -> None:
    r"""A class's backend warms every page but the one that runs a real model (its entry's ``runs_model``)."""
    from posenc_ui.lessons import PAGES
    from posenc_ui.serve.backend import warmed_views

    warmed = warmed_views()
    assert [p.view for p in PAGES if p.runs_model], "the real-model page is in the registry"
    assert all(p.view not in warmed for p in PAGES if p.runs_model)
    assert all(p.view in warmed for p in PAGES if not p.runs_model)
