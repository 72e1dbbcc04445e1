r"""The example notebook an instructor starts from, ``docs/notebook_example.ipynb``, run by a real Jupyter kernel.

It is executed as Jupyter would run it (nbclient, the ``python3`` kernel, the notebook's own folder as the working
directory) and must draw a plotly figure of every page in the registry (:data:`posenc_ui.lessons.PAGES`, not a list
written here), keep the sliders it asks for, warn on a clamped value and show the refusals it shows in the words of
the app. One check cell is added here, not in the committed notebook: which ``posenc_ui`` the kernel imported, and
that drawing every page loaded neither Streamlit nor torch.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import nbclient
import nbformat
import pytest

from posenc_ui.lessons import PAGES

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "docs" / "notebook_example.ipynb"
PLOTLY = "application/vnd.plotly.v1+json"
CHECK = (
    "import posenc_core\n"
    "print(json.dumps({'ui': posenc_ui.__file__, 'core': posenc_core.__file__,"
    " 'loaded': sorted(m for m in ('streamlit', 'torch') if m in sys.modules)}))"
)


def _figure_calls(source: str) -> list[tuple[str, ...]]:
    r"""The string arguments of each ``posenc_ui.figure(...)`` call in a cell: (page, figure) and the rest unread."""
    calls = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "figure":
            calls.append(tuple(arg.value for arg in node.args if isinstance(arg, ast.Constant)))
    return calls


@pytest.fixture(scope="module")
def executed() -> nbformat.NotebookNode:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    # the check runs before the first cell that draws a page running the real model (torch), after every other page
    runs_model = {page.id for page in PAGES if page.runs_model}
    first = next(
        (
            i
            for i, cell in enumerate(notebook.cells)
            if cell.cell_type == "code" and any(c[0] in runs_model for c in _figure_calls(cell.source))
        ),
        len(notebook.cells),
    )
    notebook.cells.insert(first, nbformat.v4.new_code_cell("import json\n" + CHECK))
    client = nbclient.NotebookClient(
        notebook, kernel_name="python3", timeout=300, resources={"metadata": {"path": str(NOTEBOOK.parent)}}
    )
    client.execute()
    return notebook


def _code_cells(notebook: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    return [cell for cell in notebook.cells if cell.cell_type == "code"]


def _text(cell: nbformat.NotebookNode, name: str) -> str:
    return "".join(out.get("text", "") for out in cell.outputs if out.output_type == "stream" and out.name == name)


def _figures(cell: nbformat.NotebookNode) -> list[dict]:
    return [out.data[PLOTLY] for out in cell.outputs if "data" in out and PLOTLY in out.data]


def test_the_committed_notebook_holds_no_outputs() -> None:
    r"""Outputs are megabytes of plotly JSON, and stale the day a figure changes: the notebook is committed clean."""
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    nbformat.validate(notebook)
    assert all(not cell.outputs and cell.execution_count is None for cell in _code_cells(notebook))


def test_the_kernel_imported_this_checkout_and_loaded_neither_streamlit_nor_torch(executed) -> None:
    [check] = [cell for cell in _code_cells(executed) if CHECK in cell.source]
    found = json.loads(_text(check, "stdout"))
    assert Path(found["ui"]).is_relative_to(ROOT) and Path(found["core"]).is_relative_to(ROOT)
    assert found["loaded"] == []


def test_every_page_has_a_figure_drawn(executed) -> None:
    drawn = set()
    for cell in _code_cells(executed):
        calls = _figure_calls(cell.source)
        if len(calls) == 1 and _figures(cell):
            [figure] = _figures(cell)
            assert figure["data"], cell.source
            drawn.add(calls[0][0])
    assert drawn == {page.id for page in PAGES}


def test_the_sliders_asked_for_come_as_frames(executed) -> None:
    kept = [cell for cell in _code_cells(executed) if "keep_slider=True" in cell.source]
    assert kept
    for cell in kept:
        [figure] = _figures(cell)
        assert len(figure["frames"]) >= 2 and len(figure["layout"]["sliders"]) == 1


def test_a_clamped_value_warns_and_still_draws(executed) -> None:
    [cell] = [cell for cell in _code_cells(executed) if "dim=5000" in cell.source]
    assert re.search(
        r"ValueChanged: dim=5000 is outside what this control allows, so the figure uses 512\.", _text(cell, "stderr")
    )
    assert _figures(cell)


def test_the_refusals_say_what_was_wrong(executed) -> None:
    errors = {cell.source: out for cell in _code_cells(executed) for out in cell.outputs if out.output_type == "error"}
    assert [out.ename for out in errors.values()] == ["PosEncError", "PosEncError"]
    bits, name = errors.values()
    assert "dim = 3 bits hold only 0 … 7" in bits.evalue  # 2³ − 1: the largest position three bits hold
    assert name.evalue.startswith("figure must be one of clocks, window,") and "got 'clock'" in name.evalue
    [caught] = [cell for cell in _code_cells(executed) if "except PosEncError" in cell.source]
    code, sentence = _text(caught, "stdout").splitlines()[:2]
    assert code == "too_few_bits {'length': 16, 'dim': 3, 'largest': 7}"
    assert "位" in sentence and "0 … 7" in sentence
