r"""The lab's task registry (:data:`posenc_lab.tasks.TASKS`): a task missing anywhere fails here.

Everything the lab and the app do differently per task is read from the registry, so what can still be forgotten
when a task is added lives outside it: its words in both languages, its committed run, its batch maker (torch), and a
branch or a list of tasks written by hand somewhere else. Each has a test below.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from posenc_core import PosEncError
from posenc_lab.runs import RUNS_DIR, committed_run, committed_runs, read_results
from posenc_lab.tasks import PRESETS, TASKS, LabConfig, Task, for_task, optimal_loss, scored_at

ROOT = Path(__file__).resolve().parents[1]
LANGS = ("en", "zh")
#: The module that may name tasks: the registry itself.
REGISTRY = "posenc_lab/tasks.py"


def _words(lang: str) -> dict[str, str]:
    words = json.loads((ROOT / "assets" / "i18n" / f"shared.{lang}.json").read_text(encoding="utf-8"))
    for path in sorted((ROOT / "posenc_ui" / "lessons").glob(f"*/words.{lang}.json")):
        words |= json.loads(path.read_text(encoding="utf-8"))
    return words


@pytest.mark.parametrize("lang", LANGS)
def test_every_task_and_every_committed_run_has_its_words_in_both_languages(lang: str) -> None:
    r"""The lab page's four keys per task (:attr:`Task.words`), and Compare's name and panel title per committed run."""
    words = _words(lang)
    missing = [key for task in TASKS.values() for key in task.words if key not in words]
    missing += [
        f"compare.{part}.{run.id}"
        for run in committed_runs()
        for part in ("task", "facet")
        if f"compare.{part}.{run.id}" not in words
    ]
    assert missing == []


@pytest.mark.parametrize("name", TASKS)
def test_every_task_has_a_committed_run_of_the_cpu_preset(name: str) -> None:
    run = committed_run(name)
    results = read_results(run.path)
    config = for_task(PRESETS["cpu"], name)
    assert run.task == name == results["task"]
    assert run.own == {setting: getattr(config, setting) for setting in TASKS[name].own}
    assert results["command"].startswith(f"python -m posenc_lab --task {name} ")  # the command that made it


@pytest.mark.parametrize("run", committed_runs(), ids=lambda run: run.id)
def test_a_committed_runs_command_trains_each_of_its_encodings_once(run) -> None:
    r"""Run as written today, each part of the stored command (``A && B``: B adds to A's file with ``--add-to``)
    trains its ``--encodings``, or the CLI's default, all of the lab's families; together, every encoding of the
    file exactly once, so ``--add-to`` finds none trained twice."""
    results = read_results(run.path)
    trained = []
    for part in results["command"].split(" && "):
        words = part.split()
        assert words[:3] == ["python", "-m", "posenc_lab"]
        trained += words[words.index("--encodings") + 1].split(",") if "--encodings" in words else LabConfig().encodings
    assert sorted(trained) == sorted(results["config"]["encodings"])
    assert len(trained) == len(set(trained))


def test_every_committed_run_is_of_a_registry_task_and_in_the_one_folder() -> None:
    assert {run.path for run in committed_runs()} == set(RUNS_DIR.glob("*.json"))
    assert {run.task for run in committed_runs()} == set(TASKS)
    assert len({run.id for run in committed_runs()}) == len(committed_runs())


@pytest.mark.parametrize("run", committed_runs(), ids=lambda run: run.id)
def test_a_committed_runs_axis_and_optimum_are_its_tasks(run) -> None:
    r"""What a run is scored at and its optimum come from its task's entry (an unknown optimum stays ``None``, it is
    never taken as zero); the lag task's closed form is checked against its definition in tests/app/test_lab.py."""
    results = read_results(run.path)
    config = LabConfig(**{**results["config"], "encodings": tuple(results["config"]["encodings"])})
    positions = scored_at(config, config.eval_length)
    assert results["positions"] == positions.tolist()
    optimum = optimal_loss(config, positions)
    assert (results["optimal_loss"] is None) == (optimum is None) == (TASKS[run.task].optimum is None)
    if optimum is not None:
        assert results["optimal_loss"] == optimum.tolist()


@pytest.mark.parametrize("name", TASKS)
def test_every_tasks_batch_maker_gives_its_tokens_and_its_evaluation(name: str) -> None:
    torch = pytest.importorskip("torch")
    config = for_task(PRESETS["tiny"], name)
    task = TASKS[name]
    batches = task.batches(config, torch.device("cpu"))
    tokens = batches.batch(4, config.train_length)
    assert tokens.shape == (4, config.train_length) and tokens.dtype == torch.int64
    assert 0 <= int(tokens.min()) and int(tokens.max()) < config.vocab
    if task.scored_by == "distance":
        assert batches.at_distance(5).shape[1] == 5 + 2  # the value, the query 5 tokens later, the answer
    else:
        evaluation = batches.evaluation(config.train_length)
        assert evaluation.shape[0] >= config.eval_sequences and evaluation.shape[1] == config.train_length


def test_a_malformed_task_fails_when_the_registry_is_built() -> None:
    make = {"vocab": lambda config: 4, "batches": lambda config, device: None}
    with pytest.raises(PosEncError, match="scored_by"):
        Task("copy", "token", **make)
    with pytest.raises(PosEncError, match="LabConfig fields"):
        Task("copy", "position", settings={"window": 3}, **make)
    with pytest.raises(PosEncError, match="identifier"):
        Task("copy-2", "position", **make)
    with pytest.raises(PosEncError, match="task must be one of"):
        LabConfig(task="copy")


def _task_lists_and_branches(source: str) -> list[str]:
    r"""``<something about a task> == "<task>"`` (or ``!=``), and literals listing or keyed by three or more tasks: a
    branch or a list a new task would have to be added to by hand. A claim about one or two named runs (Compare's
    ``measures["retrieval"]``, the learned page's two runs) says something about those, and stays."""
    names = set(TASKS)
    found = []
    for node in ast.walk(ast.parse(source)):
        elements = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None)
        if isinstance(node, ast.Tuple | ast.List | ast.Set | ast.Dict) and elements is not None:
            listed = [e.value for e in elements if isinstance(e, ast.Constant) and e.value in names]
            if len(listed) >= 3:
                found.append(f"line {node.lineno}: list {listed}")
        elif isinstance(node, ast.Compare) and all(isinstance(op, ast.Eq | ast.NotEq) for op in node.ops):
            sides = [node.left, *node.comparators]
            named = any(isinstance(side, ast.Constant) and side.value in names for side in sides)
            about_task = any("task" in ast.unparse(side) for side in sides if not isinstance(side, ast.Constant))
            if named and about_task:
                found.append(f"line {node.lineno}: branch {ast.unparse(node)}")
    return found


def test_the_finder_sees_a_branch_and_a_list_and_leaves_claims() -> None:
    source = (
        'if config.task == "retrieval":\n    pass\nNAMES = ("lag", "retrieval", "text")\n'
        'RUNS = {"lag": 1, "retrieval": 2, "text": 3}\nPAIR = ("text", "lag")\nif kind == "text":\n    pass\n'
    )
    assert [f.split(":")[0] for f in _task_lists_and_branches(source)] == ["line 1", "line 3", "line 4"]


def test_no_task_name_list_or_branch_outside_the_registry() -> None:
    folders = ("posenc_core", "posenc_lab", "posenc_ui", "pages")
    paths = [ROOT / "app.py", *(p for d in folders for p in (ROOT / d).rglob("*.py"))]
    found = {
        str(path.relative_to(ROOT)): hits
        for path in sorted(paths)
        if str(path.relative_to(ROOT)) != REGISTRY
        if (hits := _task_lists_and_branches(path.read_text(encoding="utf-8")))
    }
    assert found == {}


#: The lab's modules that import torch; the others (the registry, the runs and the verdict, the queue) import none.
TORCH_MODULES = {"batches", "hooks", "model", "stack", "train", "__main__"}


def test_the_lab_package_imports_no_ui_and_torch_only_in_its_torch_modules() -> None:
    r"""``posenc_lab`` is below the UI: no Streamlit, no plotly, no ``posenc_ui``; torch only where it trains (the
    registry's batch makers import :mod:`posenc_lab.batches` when called)."""
    found = {}
    for path in sorted((ROOT / "posenc_lab").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        imported |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        banned = {"streamlit", "plotly", "posenc_ui"} | ({"torch"} if path.stem not in TORCH_MODULES else set())
        if imported & banned:
            found[path.name] = sorted(imported & banned)
    assert found == {}
