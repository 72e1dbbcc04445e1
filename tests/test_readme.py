r"""The README is the front door: every command it and ``docs/benchmarks.md`` show runs as written, from the
repository root, and the lab's table it shows is what the committed runs hold.

A command that only worked on a machine that kept something (an install, a ``PYTHONPATH``) is how the README once
failed a newcomer, so each runs here in a child process with the environment a new shell would give it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BENCHMARKS = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")


def _fenced(language: str, text: str = README) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, flags=re.S)


def _python_commands(text: str) -> list[str]:
    r"""Every ``python …`` command ``text`` shows, in a shell block or inline code."""
    lines = [line for block in _fenced("bash", text) for line in block.splitlines()]
    lines += re.findall(r"`((?:[A-Z_]+=\S+ )*python [^`]+)`", text)
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


COMMANDS = _python_commands(README)
#: Each entry point that the README or the benchmark notes name → every option they show it with.
ENTRY_POINTS: dict[str, set[str]] = {}
for _command in COMMANDS + _python_commands(BENCHMARKS):
    _options = set(re.findall(r"(?<![\w-])--[a-z][\w-]*", _command))
    ENTRY_POINTS.setdefault(" ".join(_entry_point(_command)[1:]), set()).update(_options)


def test_the_readme_shows_the_commands_a_newcomer_needs() -> None:
    shown = {" ".join(_entry_point(c)[1:]) for c in COMMANDS}
    needed = {"bench/bench_core.py", "bench/bench_lab.py", "bench/bench_app.py", "bench/load.py"}
    needed |= {"bench/scaleout/run.py", "-m posenc_ui.export", "-m posenc_lab"}
    assert needed <= shown
    setup = _fenced("bash")[0]
    assert "pip install -r requirements.txt && streamlit run app.py" in setup
    assert "pip install -r requirements-dev.txt && python -m pytest" in setup
    assert "python3 -m venv" in README  # how to make the environment these two run in


def test_the_readmes_system_packages_are_the_ones_ci_installs() -> None:
    (shown,) = re.findall(r"`apt-get install -y ([a-z0-9 -]+)`", README)
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    (installed,) = re.findall(r"apt-get install -y -q ([a-z0-9 -]+)\n", ci)
    assert shown.split() == installed.split() == ["chromium", "fonts-noto-cjk", "nginx"]


def test_ci_runs_the_readmes_test_command_verbatim_in_a_fresh_environment() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "\npip install -r requirements-dev.txt && python -m pytest\n" in ci
    assert "mktemp -d" in ci and "-m venv" in ci
    assert ci.index("-m venv") < ci.index("pip install -r requirements-dev.txt")
    assert "ruff check ." in ci and "ruff format --check ." in ci


@pytest.mark.parametrize("entry_point", sorted(ENTRY_POINTS))
def test_every_python_command_starts_from_the_repository_root(entry_point: str) -> None:
    r"""Each entry point imports everything it needs and answers ``--help`` with every option shown with it (what it
    does is tested elsewhere)."""
    run = subprocess.run(
        [sys.executable, *entry_point.split(), "--help"],
        cwd=ROOT,
        env=_shell_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "usage" in run.stdout.lower()
    assert {option for option in ENTRY_POINTS[entry_point] if option not in run.stdout} == set()


@pytest.mark.parametrize("snippet", _fenced("python"))
def test_every_python_snippet_runs_as_written(snippet: str, tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-c", snippet], cwd=tmp_path, env=_shell_env(), capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr[-3000:]


def test_the_readme_stays_a_front_door() -> None:
    assert len(README.splitlines()) <= 200  # the measurement notes live in docs/benchmarks.md
    for link in re.findall(r"\]\((docs/[^)#]+)", README):
        if link != "docs/model_layers.md":  # written with the per-layer reader, arriving from its own branch
            assert (ROOT / link).is_file(), link


#: The README's lab table: its column (a committed run), what it reads from each seed, and the far band in units of L.
LAB_COLUMNS = (
    ("lag_cpu", "excess", 4, 8),
    ("lag8_cpu", "excess", 4, 8),
    ("retrieval_cpu", "accuracy", 16, 32),
    ("text_cpu", "loss", 4, 8),
)
LAB_ROWS = {"none": "none", "learned": "learned", "sinusoidal": "sinusoidal", "RoPE": "rope", "ALiBi": "alibi"}
LAB_ROWS["T5 bias"] = "t5"
LAB_ROWS |= {"p-RoPE": "p_rope", "RoPE/NoPE hybrid": "hybrid", "FoX": "fox"}


def _lab_cell(run_file: str, measure: str, low: int, high: int, encoding: str) -> str:
    r"""One cell, recomputed from the committed JSON with nothing from the app: per seed, the mean over the positions
    inside L and over those in [low·L, high·L) of the loss less the closed-form optimum (lag), the accuracy
    (retrieval) or the loss (text); then "mean of the seeds inside → mean of the seeds far [lowest, highest seed]"."""
    results = json.loads((ROOT / "assets" / "lab" / f"{run_file}.json").read_text(encoding="utf-8"))
    run = results["runs"][encoding]
    seeds = np.asarray(run["accuracy_seeds" if measure == "accuracy" else "loss_seeds"])
    if measure == "excess":
        seeds = seeds - np.asarray(results["optimal_loss"])
    length, positions = results["config"]["train_length"], np.asarray(results["positions"])
    inside = seeds[:, positions < length].mean(axis=1)
    far = seeds[:, (positions >= low * length) & (positions < high * length)].mean(axis=1)
    return f"{inside.mean():.2f} → {far.mean():.2f} [{far.min():.2f}, {far.max():.2f}]"


def test_the_readmes_lab_table_is_what_the_committed_runs_hold() -> None:
    rows = {}
    for line in README.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if cells[0] in LAB_ROWS:
            rows[cells[0]] = cells[1:]
    assert set(rows) == set(LAB_ROWS)
    for label, encoding in LAB_ROWS.items():
        assert rows[label] == [_lab_cell(*column, encoding) for column in LAB_COLUMNS], label
