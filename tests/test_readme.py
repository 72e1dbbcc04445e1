r"""The README is the front door: every command it shows runs as written, from the repository root.

A command that only worked on a machine that kept something (an install, a ``PYTHONPATH``) is how the README once
failed a newcomer, so each runs here in a child process with the environment a new shell would give it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _fenced(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.S)


def _python_commands() -> list[str]:
    r"""Every ``python …`` command the README shows, in a shell block or inline code."""
    lines = [line for block in _fenced("bash") for line in block.splitlines()]
    lines += re.findall(r"`((?:[A-Z_]+=\S+ )*python [^`]+)`", README)
    commands = []
    for line in lines:
        line = line.split("#")[0].strip()
        found = re.search(r"\bpython (.+)", line)
        if found and not found.group(1).startswith("-m pytest"):
            commands.append(found.group(0).split("&&")[0].strip())
    return sorted(set(commands))


def _entry_point(command: str) -> list[str]:
    r"""``python bench/load.py --sessions 50`` → ``[python, bench/load.py]``; ``python -m m …`` → ``[python, -m, m]``"""
    words = command.split()[1:]
    return [sys.executable, *words[:2]] if words[0] == "-m" else [sys.executable, words[0]]


def _shell_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}


COMMANDS = _python_commands()


def test_the_readme_shows_the_commands_a_newcomer_needs() -> None:
    shown = {" ".join(_entry_point(c)[1:]) for c in COMMANDS}
    assert {"bench/bench_core.py", "bench/bench_lab.py", "bench/bench_app.py", "bench/load.py",
            "bench/scaleout/run.py", "-m posenc_ui.export", "-m posenc_core.torch_backend.lab"} <= shown  # fmt: skip
    setup = _fenced("bash")[0]
    assert "pip install -r requirements.txt && streamlit run app.py" in setup
    assert "pip install -r requirements-dev.txt && python -m pytest" in setup
    assert "python3 -m venv" in README  # how to make the environment these two run in


def test_ci_runs_the_readmes_test_command_verbatim_in_a_fresh_environment() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "\npip install -r requirements-dev.txt && python -m pytest\n" in ci
    assert "mktemp -d" in ci and "-m venv" in ci
    assert ci.index("-m venv") < ci.index("pip install -r requirements-dev.txt")
    assert "ruff check ." in ci and "ruff format --check ." in ci


@pytest.mark.parametrize("command", COMMANDS)
def test_every_python_command_starts_from_the_repository_root(command: str) -> None:
    r"""Each entry point imports everything it needs and answers ``--help`` (what it does is tested elsewhere)."""
    run = subprocess.run([*_entry_point(command), "--help"], cwd=ROOT, env=_shell_env(), capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    assert "usage" in run.stdout.lower()


@pytest.mark.parametrize("snippet", _fenced("python"))
def test_every_python_snippet_runs_as_written(snippet: str, tmp_path: Path) -> None:
    run = subprocess.run([sys.executable, "-c", snippet], cwd=tmp_path, env=_shell_env(), capture_output=True,
                         text=True, timeout=120)  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
