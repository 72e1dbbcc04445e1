r"""Packaging tells the truth: the wheel is the library with its licence, and says which Python it needs."""

from __future__ import annotations

import email
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    r"""A wheel built offline from a copy of the sources (a build leaves ``build/`` and ``*.egg-info`` behind)."""
    source = tmp_path_factory.mktemp("source")
    junk = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info", "build")
    for name in ("pyproject.toml", "README.md", "LICENSE", "app.py"):
        shutil.copy2(ROOT / name, source / name)
    for name in ("posenc_core", "posenc_ui", "assets", "pages", "tests", "bench"):
        shutil.copytree(ROOT / name, source / name, ignore=junk)
    out = tmp_path_factory.mktemp("dist")
    run = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    (path,) = out.glob("posenc-*.whl")
    return zipfile.ZipFile(path)


def test_the_wheel_is_the_library_and_nothing_else(wheel: zipfile.ZipFile) -> None:
    names = wheel.namelist()
    packages = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    # The app and the lab run from a checkout (README): posenc_ui, posenc_lab (whose committed runs are in assets/)
    # and assets stay out; the torch versions of the core's formulas ship with it.
    assert packages == {"posenc_core"}
    assert "posenc_core/__init__.py" in names and "posenc_core/torch_backend/__init__.py" in names


def test_the_wheel_carries_the_licence_the_metadata_names(wheel: zipfile.ZipFile) -> None:
    (meta_name,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    meta = email.message_from_bytes(wheel.read(meta_name))
    assert meta["License-Expression"] == PYPROJECT["project"]["license"] == "MIT"
    assert meta["License-File"] == "LICENSE"
    (licence,) = [n for n in wheel.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
    text = wheel.read(licence).decode()
    assert text.startswith("MIT License") and text == (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert meta["Requires-Python"] == PYPROJECT["project"]["requires-python"]


def test_requires_python_admits_this_interpreter_and_no_older_than_the_code_needs() -> None:
    floor = tuple(int(n) for n in re.fullmatch(r">=(\d+)\.(\d+)", PYPROJECT["project"]["requires-python"]).groups())
    assert sys.version_info[:2] >= floor
    assert floor >= (3, 11)  # tomllib (the tests, above) is new in 3.11
    assert PYPROJECT["tool"]["ruff"]["target-version"] == f"py{floor[0]}{floor[1]}"


def test_every_tool_and_runtime_dependency_is_pinned() -> None:
    r"""A new release of pytest, hypothesis or numpy must not turn CI red overnight: every requirement is ``==``."""
    for name in ("requirements.txt", "requirements-dev.txt"):
        for line in (ROOT / name).read_text(encoding="utf-8").splitlines():
            line = line.split("#")[0].strip()
            if line and not line.startswith(("-r ", "-e ")):
                assert re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[0-9][0-9A-Za-z.+]*", line), f"{name}: {line}"


def test_files_the_repository_cites_are_in_the_repository() -> None:
    r"""No file points at notes a user of the repository does not have; every ``docs/…`` it names exists."""
    cited: set[str] = set()
    for path in ROOT.rglob("*"):
        if (
            path.suffix not in (".py", ".toml", ".md", ".txt", ".cfg")
            or any(part in (".git", ".venv", "node_modules", "build") for part in path.parts)
            or path == Path(__file__).resolve()
        ):  # this file names what it looks for
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        assert "../shared" not in text, path
        for bare in re.findall(r"(?<![\w/.-])(REFERENCES|DESIGN|STREAMLIT|STYLE)\.md", text):
            pytest.fail(f"{path.relative_to(ROOT)} cites {bare}.md, which is not in the repository")
        cited.update(re.findall(r"\bdocs/[\w./-]+\.md", text))
    assert cited, "the code cites docs/ somewhere"
    missing = sorted(c for c in cited if not (ROOT / c).is_file())
    assert not missing, missing
