r"""The app's modules hold only what the app runs: no function or class in ``posenc_ui`` that nothing shipped uses.

Helpers that read back what an AppTest run drew live in ``tests/app/drawn.py``. ``posenc_core`` is left out: it is a
library, and its public functions are there for its readers whether or not the app calls them. ``posenc_ui``'s own
public API (``posenc_ui.__all__``: ``figure``, for notebooks) is used by readers' notebooks: the example notebook that
a real kernel runs (``docs/notebook_example.ipynb``, ``tests/test_notebook_kernel.py``) counts as shipped code.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = [
    ROOT / "app.py",
    *(p for d in ("posenc_ui", "posenc_core", "pages", "bench") for p in (ROOT / d).rglob("*.py")),
]
NOTEBOOK = ROOT / "docs" / "notebook_example.ipynb"


def _notebook_code() -> list[str]:
    r"""The source of every code cell of the example notebook."""
    cells = json.loads(NOTEBOOK.read_text(encoding="utf-8"))["cells"]
    return ["".join(cell["source"]) for cell in cells if cell["cell_type"] == "code"]


def _names_used(paths: list[Path], sources: tuple[str, ...] = ()) -> set[str]:
    r"""Every name read as a variable or an attribute anywhere in ``paths`` or ``sources`` (an import alone is no
    use)."""
    used = set()
    for source in [*(path.read_text(encoding="utf-8") for path in paths), *sources]:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Name):
                used.add(node.id)
            elif isinstance(node, ast.Attribute):
                used.add(node.attr)
    return used


def test_every_function_and_class_of_the_app_is_used_by_shipped_code() -> None:
    used = _names_used(SHIPPED, tuple(_notebook_code()))
    unused = [
        f"{path.relative_to(ROOT)}::{node.name}"
        for path in sorted((ROOT / "posenc_ui").rglob("*.py"))
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and not node.name.startswith("__")
        if node.name not in used
    ]
    assert unused == []


def test_the_finder_sees_a_function_nothing_calls(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("def used():\n    return 1\n\n\ndef unused():\n    return used()\n", encoding="utf-8")
    assert "used" in _names_used([module]) and "unused" not in _names_used([module])


def test_the_packages_public_api_is_called_by_the_example_notebook_and_documented() -> None:
    r"""What ``posenc_ui.__all__`` offers readers is what their notebooks use: the example calls each name, and
    docs/notebooks.md documents it."""
    import posenc_ui

    called = _names_used([], tuple(_notebook_code()))
    documented = (ROOT / "docs" / "notebooks.md").read_text(encoding="utf-8")
    assert posenc_ui.__all__
    assert [name for name in posenc_ui.__all__ if name not in called or f"posenc_ui.{name}(" not in documented] == []
