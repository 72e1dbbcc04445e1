r"""Security properties, each asserted: no raw HTML from user text, no eval, no stray writes, XSRF on, bound address.

* Sources (``app.py``, ``pages/``, ``posenc_ui/``, ``posenc_core/``) are parsed with :mod:`ast`: no ``eval``/``exec``,
  and ``unsafe_allow_html=True``, ``st.html`` or ``components.html`` only ever with a string literal.
* Every built page is run with AppTest from an empty temporary working directory while an audit hook records every
  file opened for writing, created, renamed or deleted: nothing may land outside the temp folder.
* ``.streamlit/config.toml`` leaves ``server.enableXsrfProtection`` on, and a live server sets the XSRF cookie and
  listens only on the address it was given.
"""

from __future__ import annotations

import ast
import os
import sys
import tempfile
import tomllib
import urllib.error
import urllib.request
from pathlib import Path

import psutil
import pytest
from streamlit.testing.v1 import AppTest

from posenc_ui import catalog

ROOT = catalog.ROOT
PACKAGES = ("posenc_ui", "posenc_core")
APP_CODE = [
    ROOT / "app.py",
    *sorted((ROOT / "pages").glob("*.py")),
    *sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py")),
]
HTML_SINKS = {"html"}  # st.html(...), components.html(...)


def calls(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Call):
            yield node


def literal_constants(path: Path) -> set[str]:
    r"""Module-level names bound exactly once, to a string literal (e.g. ``PAGE_CSS = "<style>…"``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    bound: dict[str, list[ast.AST]] = {}
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        for target in targets:
            if isinstance(target, ast.Name):
                bound.setdefault(target.id, []).append(node)
    return {
        name
        for name, nodes in bound.items()
        if len(nodes) == 1
        and nodes[0] in tree.body
        and isinstance(nodes[0], ast.Assign)
        and isinstance(nodes[0].value, ast.Constant)
        and isinstance(nodes[0].value.value, str)
    }


def is_literal(node: ast.AST | None, constants: set[str] = frozenset()) -> bool:
    r"""A string literal, or the name of a module-level constant bound once to one."""
    if isinstance(node, ast.Name):
        return node.id in constants
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


@pytest.mark.parametrize("path", APP_CODE, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_eval_or_exec(path: Path) -> None:
    found = [n.lineno for n in calls(path) if isinstance(n.func, ast.Name) and n.func.id in ("eval", "exec")]
    assert not found, f"{path.name}: eval/exec at lines {found}"


@pytest.mark.parametrize("path", APP_CODE, ids=lambda p: str(p.relative_to(ROOT)))
def test_raw_html_only_from_literals(path: Path) -> None:
    r"""``unsafe_allow_html`` (unless literally False) and HTML sinks may only render a string literal."""
    bad, constants = [], literal_constants(path)
    for node in calls(path):
        flag = next((k.value for k in node.keywords if k.arg == "unsafe_allow_html"), None)
        raw_flag = flag is not None and not (isinstance(flag, ast.Constant) and flag.value is False)
        sink = isinstance(node.func, ast.Attribute) and node.func.attr in HTML_SINKS
        if (raw_flag or sink) and not is_literal(node.args[0] if node.args else None, constants):
            bad.append(node.lineno)
    assert not bad, f"{path.name}: raw HTML from a non-literal at lines {bad}"


# --- nothing written outside a temp folder ---------------------------------------------------------------------

_recording: list[str] | None = None
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
MUTATING = {"os.mkdir", "os.rename", "os.remove", "os.rmdir", "os.truncate", "shutil.move", "shutil.rmtree"}


def _audit(event: str, args: tuple) -> None:
    if _recording is None:
        return
    if event == "open" and len(args) >= 3:
        path, mode, flags = args[0], args[1], args[2]
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & WRITE_FLAGS
        )
        if writing and isinstance(path, str | bytes | os.PathLike):
            _recording.append(os.fsdecode(path))
    elif event in MUTATING and args:
        _recording.append(os.fsdecode(args[0]) if isinstance(args[0], str | bytes | os.PathLike) else str(args[0]))


sys.addaudithook(_audit)  # audit hooks cannot be removed; it records only while _recording is a list


def outside_temp(paths: list[str]) -> list[str]:
    temp = os.path.realpath(tempfile.gettempdir())
    allowed = (temp + os.sep, "/dev/")
    real = {os.path.realpath(p) for p in paths}
    return sorted(p for p in real if not p.startswith(allowed) and f"{os.sep}__pycache__{os.sep}" not in p)


def test_pages_write_nothing_outside_a_temp_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    global _recording
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    _recording = []
    try:
        for page in [None, *catalog.PAGES]:
            at = AppTest.from_file(str(ROOT / catalog.HOME_SCRIPT), default_timeout=30)
            if page is not None:
                at.switch_page(page.script)
            at.query_params["lang"] = "en"
            at.run()
            for slider in at.slider:
                slider.set_value(slider.max)
            at.run()
            assert not at.exception, [e.value for e in at.exception]
        written = list(_recording)
    finally:
        _recording = None
    assert not outside_temp(written), outside_temp(written)
    assert not any(cwd.iterdir()), sorted(cwd.iterdir())


# --- user text reaching markdown -------------------------------------------------------------------------------

LINK = "x` [evil](https://evil.example/x) `y"


def outside_code_spans(markdown: str) -> str:
    r"""The text of ``markdown`` with inline code spans removed (what would be rendered as markup)."""
    parts = markdown.split("`")
    return "".join(parts[0::2])


def test_user_text_in_notices_and_refusals_is_not_markup() -> None:
    r"""A shared link's values and a pasted config's text reach the page only inside code spans (frame.code_span)."""
    shown = []
    first = catalog.PAGES[0]
    at = AppTest.from_file(str(ROOT / catalog.HOME_SCRIPT), default_timeout=30)
    at.switch_page(first.script)
    at.query_params.update({"lang": "en", **{name: LINK for name in ("dim", "length", "seed", "pair")}})
    at.run()
    shown += [w.value for w in at.warning]
    at = AppTest.from_file(str(ROOT / catalog.HOME_SCRIPT), default_timeout=30)
    at.switch_page(catalog.BY_ID["extension"].script)
    config = '{"max_position_embeddings": 4096, "hidden_size": 64, "num_attention_heads": 1, "rope_scaling": '
    at.query_params.update({"lang": "en", "config": config + '{"rope_type": "[evil](https://evil.example/x)"}}'})
    at.run()
    shown += [e.value for e in at.error]
    assert shown
    assert not [s for s in shown if "evil.example" in outside_code_spans(s)]


def test_config_turns_the_file_watcher_off() -> None:
    r"""The README's class command reads this file: with Streamlit's default watcher, 30 students' reruns cost the
    server 208 s of CPU against 85 s without it, and 150 of them passed the load tool's 15 s deadline (a round of
    ``bench/load.py``, docs/streamlit.md)."""
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["fileWatcherType"] == "none"


# --- XSRF and the bound address --------------------------------------------------------------------------------


def test_config_keeps_xsrf_protection_on() -> None:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    server = config.get("server", {})
    assert server.get("enableXsrfProtection", True) is True
    assert server.get("enableCORS", True) is True  # Streamlit turns XSRF off when CORS is off


@pytest.fixture(scope="module")
def live_server():
    sys.path.insert(0, str(ROOT / "tests" / "e2e"))
    from server import free_port, start_server, stop_server

    port = free_port()
    proc = start_server(port)
    try:
        yield proc, port
    finally:
        stop_server(proc)


def test_live_server_sets_the_xsrf_cookie_and_refuses_writes_without_the_token(live_server) -> None:
    _, port = live_server
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=10) as resp:
        cookies = resp.headers.get_all("Set-Cookie") or []
    assert any(c.startswith("_streamlit_xsrf=") for c in cookies), cookies
    put = urllib.request.Request(f"http://127.0.0.1:{port}/_stcore/upload_file/s/f", data=b"x", method="PUT")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(put, timeout=10)
    assert refused.value.code == 403


def test_live_server_listens_only_where_configured(live_server) -> None:
    proc, port = live_server
    procs = [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]
    listening = {(c.laddr.ip, c.laddr.port) for p in procs for c in p.net_connections("inet") if c.status == "LISTEN"}
    assert listening == {("127.0.0.1", port)}, listening
