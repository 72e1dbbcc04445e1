r"""The encoding-family registry (:data:`posenc_core.FAMILIES`): a family missing anywhere fails here.

Every name list of the core and the app is read from the registry, so what can still be forgotten when a family is
added lives outside the core's lists: its words in both languages, its colour, its lab hooks (torch), the committed
lab runs, and the explicit subsets a page names. Each has a test below.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pytest

import posenc_core as pc
from posenc_core.families import COMPARED, DEMO, FAMILIES, KINDS, LAB, LINEAR_ROUTES, Family
from posenc_lab import tasks as lab_tasks

ROOT = Path(__file__).resolve().parents[1]
LANGS = ("en", "zh")
RUNS = sorted((ROOT / "assets" / "lab").glob("*.json"))
#: The modules keyed by family name: the registry, the lab's torch hooks, the colours.
REGISTRIES = ("posenc_core/families.py", "posenc_lab/hooks.py", "posenc_ui/figures/style.py")


def _words(lang: str) -> dict[str, str]:
    r"""Every key of the shared and page catalogues of ``lang``, read from the JSON files themselves."""
    words = json.loads((ROOT / "assets" / "i18n" / f"shared.{lang}.json").read_text(encoding="utf-8"))
    for path in sorted((ROOT / "posenc_ui" / "lessons").glob(f"*/words.{lang}.json")):
        words |= json.loads(path.read_text(encoding="utf-8"))
    return words


def test_the_lists_of_the_core_are_the_registry_in_its_order() -> None:
    names = list(FAMILIES)
    assert pc.ENCODINGS == DEMO and pc.COMPARED == COMPARED and lab_tasks.ENCODINGS == LAB
    for subset in (DEMO, COMPARED, LAB):
        assert list(subset) == [n for n in names if n in subset]  # registry order, no name twice
    assert dict(pc.LINEAR_ROUTES) == {n: FAMILIES[n].linear_route for n in COMPARED} == dict(LINEAR_ROUTES)
    assert all(entry.name == name and entry.kind in KINDS for name, entry in FAMILIES.items())


def test_compare_lists_the_added_families_first() -> None:
    kinds = [FAMILIES[n].kind for n in COMPARED]
    added = kinds.count("added")
    assert added and kinds[:added] == ["added"] * added


def test_a_malformed_entry_fails_when_the_registry_is_built() -> None:
    with pytest.raises(pc.PosEncError, match="kind"):
        Family("fire", "learned bias")
    with pytest.raises(pc.PosEncError, match="linear_route"):
        Family("fire", "bias", scores=lambda length, *, dim, seed: np.zeros((length, length)))
    with pytest.raises(pc.PosEncError, match="linear_route"):
        Family("fire", "bias", scores=lambda length, *, dim, seed: np.zeros((length, length)), linear_route="scan")
    with pytest.raises(pc.PosEncError, match="identifier"):
        Family("fire-2", "bias")


@pytest.mark.parametrize("name", COMPARED)
def test_every_compared_family_builds_a_finite_square_score_matrix(name: str) -> None:
    scores = pc.position_score_matrix(name, 20, dim=8, seed=3)
    assert scores.shape == (20, 20) and np.isfinite(scores).all()


@pytest.mark.parametrize("name", DEMO)
def test_every_demo_family_runs_page_ones_head(name: str) -> None:
    x = pc.token_embeddings(list("abcde"), 8, seed=1)
    w_q, w_k, w_v = pc.projection_weights(8, 4, seed=2)
    out, weights = pc.self_attention(x, w_q=w_q, w_k=w_k, w_v=w_v, encoding=name)
    assert out.shape == (5, 4) and np.allclose(weights.sum(axis=1), 1.0)


@pytest.mark.parametrize("lang", LANGS)
def test_every_family_has_its_words_in_both_languages(lang: str) -> None:
    r"""``enc.<name>`` for every family (page 1, the lab, Compare's labels), Compare's four columns for every family
    in Compare, and the words of every linear route; Compare names the family without position by its own key."""
    words = _words(lang)
    missing = [f"enc.{name}" for name in FAMILIES if f"enc.{name}" not in words]
    missing += [
        f"compare.{column}.{name}"
        for name in COMPARED
        for column in ("params", "cost", "where", "models")
        if f"compare.{column}.{name}" not in words
    ]
    missing += [f"compare.linear.{r}" for r in set(LINEAR_ROUTES.values()) if f"compare.linear.{r}" not in words]
    if any(entry.kind == "none" for entry in FAMILIES.values()) and "compare.enc_none" not in words:
        missing.append("compare.enc_none")
    assert missing == []


def test_every_family_has_a_colour_and_every_colour_a_family() -> None:
    from posenc_ui.figures import style

    assert set(style.ENCODING_COLOURS) == set(FAMILIES)
    colours = list(style.ENCODING_COLOURS.values())
    assert len(set(colours)) == len(colours)  # each family its own colour (the lab draws all of its families at once)


def test_every_lab_family_has_torch_hooks() -> None:
    pytest.importorskip("torch")
    from posenc_lab.hooks import LAB_HOOKS

    assert set(LAB_HOOKS) == set(LAB)


@pytest.mark.parametrize("path", RUNS, ids=[p.name for p in RUNS])
def test_the_committed_lab_runs_hold_every_lab_family_and_only_registry_names(path: Path) -> None:
    r"""Compare reads every lab family in every committed run: a family added to the lab needs the runs regenerated."""
    results = json.loads(path.read_text(encoding="utf-8"))
    assert set(results["runs"]) == set(results["config"]["encodings"]) == set(LAB)


def test_the_pages_subsets_of_families_are_registry_names() -> None:
    from posenc_ui.lessons.compare import view as compare
    from posenc_ui.lessons.lab import view as lab

    for subset in lab.ENCODING_SETS.values():
        assert subset and set(subset) <= set(LAB)
        lab_tasks.LabConfig(encodings=subset)  # a live run of each set is a valid configuration
    assert set(compare.ABSOLUTE) | set(compare.RELATIVE) <= set(COMPARED)
    assert {FAMILIES[n].kind for n in compare.ABSOLUTE} == {"added"}


def _name_lists_and_branches(source: str) -> list[str]:
    r"""``x == "<family>"`` (or ``!=``) anywhere but on a family's ``.kind``, and literals listing three or more
    families: a branch or a list a new family would have to be added to by hand. A claim about two named families
    (``for e in ("rope", "t5")``) says something about those two, and stays."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            names = [e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in FAMILIES]
            if len(names) >= 3:
                found.append(f"line {node.lineno}: list {names}")
        elif isinstance(node, ast.Compare) and all(isinstance(op, ast.Eq | ast.NotEq) for op in node.ops):
            sides = [node.left, *node.comparators]
            named = any(isinstance(side, ast.Constant) and side.value in FAMILIES for side in sides)
            on_kind = any(isinstance(side, ast.Attribute) and side.attr == "kind" for side in sides)
            if named and not on_kind:
                found.append(f"line {node.lineno}: branch {ast.unparse(node)}")
    return found


def test_the_finder_sees_a_branch_and_a_list_and_leaves_claims_and_kinds() -> None:
    source = (
        'if encoding == "t5":\n    pass\nNAMES = ("none", "rope", "alibi")\n'
        'PAIR = ("rope", "t5")\nif FAMILIES[e].kind == "none":\n    pass\n'
    )
    assert [f.split(":")[0] for f in _name_lists_and_branches(source)] == ["line 1", "line 3"]


def test_no_family_name_list_or_branch_outside_the_registries() -> None:
    paths = [ROOT / "app.py", *(p for d in ("posenc_core", "posenc_ui", "pages") for p in (ROOT / d).rglob("*.py"))]
    found = {
        str(path.relative_to(ROOT)): hits
        for path in sorted(paths)
        if str(path.relative_to(ROOT)) not in REGISTRIES
        if (hits := _name_lists_and_branches(path.read_text(encoding="utf-8")))
    }
    assert found == {}
