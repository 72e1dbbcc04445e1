r"""The code keeps the shape the house style asks for (issue 16): small files, small functions, one colour vocabulary.

- No module over ~400 lines and no function over ~50 in the app's code and its benchmarks, without exceptions:
  small plain functions, one topic a file.
- Every colour is spelled once, in :mod:`posenc_ui.figures.style`, under the name of what it means on screen; the one
  copy that cannot import it (Streamlit's theme in ``.streamlit/config.toml``) is checked against it here.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import tomllib
from pathlib import Path

import pytest

from posenc_ui.figures import style

ROOT = Path(__file__).resolve().parents[1]
MAX_FILE_LINES, MAX_FUNCTION_LINES = 400, 50
SHAPED = ("posenc_core", "posenc_ui", "pages", "app.py", "bench")

#: A colour written as CSS hex: #rgb, #rgba, #rrggbb or #rrggbbaa.
HEX_COLOUR = re.compile(r"#(?:[0-9a-fA-F]{8}|[0-9a-fA-F]{6}|[0-9a-fA-F]{3,4})\b")
#: A colour written as CSS rgb()/rgba() with numbers in it (style.translucent builds them from the named colours).
RGB_COLOUR = re.compile(r"\brgba?\(\s*\d")
STYLE = ROOT / "posenc_ui" / "figures" / "style.py"


def _sources(*roots: str) -> list[Path]:
    found: list[Path] = []
    for root in roots:
        path = ROOT / root
        found += [path] if path.is_file() else sorted(path.rglob("*.py"))
    return found


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _function_lengths(tree: ast.AST) -> dict[str, int]:
    r"""{qualified name: lines from ``def`` (decorators aside) to the last line} for every function, nested ones too."""
    lengths: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    lengths[name] = child.end_lineno - child.lineno + 1
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return lengths


def _long_files() -> set[str]:
    return {_name(p) for p in _sources(*SHAPED) if len(p.read_text(encoding="utf-8").splitlines()) > MAX_FILE_LINES}


def _long_functions() -> dict[str, int]:
    long: dict[str, int] = {}
    for path in _sources(*SHAPED):
        for name, lines in _function_lengths(ast.parse(path.read_text(encoding="utf-8"))).items():
            if lines > MAX_FUNCTION_LINES:
                long[f"{_name(path)}::{name}"] = lines
    return long


def test_no_module_is_over_400_lines() -> None:
    assert _long_files() == set()


def test_no_function_is_over_50_lines() -> None:
    assert _long_functions() == {}


def test_the_size_rules_have_no_allow_list() -> None:
    r"""The rules once carried allow-lists of offenders; every offender was split instead, and the lists went.

    A module-level name in this file that sounds like an exception list (``ALLOWED_…``, ``…EXEMPT…``, ``…SKIP…``)
    would bring one back: an offender has to be fixed, not listed.
    """
    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    names = {
        target.id
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Name)
    }
    assert {name for name in names if any(word in name.upper() for word in ("ALLOW", "EXEMPT", "SKIP"))} == set()


def _string_literals(path: Path) -> list[tuple[int, str]]:
    r"""(line, text) of every string literal in ``path`` (f-strings whole); comments and code are not looked at."""
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    return [(tok.start[0], tok.string) for tok in tokens if tok.type == tokenize.STRING]


def test_colours_are_spelled_only_in_the_style_module() -> None:
    r"""A colour literal anywhere else is a colour with no name: it cannot be found, reused or changed in one place."""
    stray = [
        f"{_name(path)}:{line}: {text[:60]}"
        for path in _sources("posenc_ui", "pages", "app.py")
        if path != STYLE
        for line, text in _string_literals(path)
        if HEX_COLOUR.search(text) or RGB_COLOUR.search(text)
    ]
    assert stray == []


def test_the_colour_check_finds_colours() -> None:
    for colour in ("#262730", "#ddd", "#0072B2cc", "rgba(0,0,0,0)", "rgb(1, 2, 3)"):
        assert HEX_COLOUR.search(colour) or RGB_COLOUR.search(colour), colour
    for text in ("issue #16", "# a comment", "f'rgba({r},{g},{b},{a})'", "color: var(--x)"):
        assert not (HEX_COLOUR.search(text) or RGB_COLOUR.search(text)), text


def test_streamlit_theme_uses_the_primary_colour_of_the_figures() -> None:
    theme = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))["theme"]
    assert theme["primaryColor"].lower() == style.PRIMARY.lower()


@pytest.mark.parametrize(
    ("colour", "alpha", "css"),
    [(style.WHITE, 0.8, "rgba(255,255,255,0.8)"), (style.BLUE, style.BAND_ALPHA, "rgba(0,114,178,0.18)"),
     (style.GREY, 0.2, "rgba(140,140,140,0.2)"), (style.BLACK, 0, "rgba(0,0,0,0)")],
)  # fmt: skip
def test_translucent_colours_are_the_css_plotly_reads(colour: str, alpha: float, css: str) -> None:
    assert style.translucent(colour, alpha) == css


def test_test_modules_have_unique_names() -> None:
    r"""The test folders are not packages, so pytest imports each file by its bare name: two files with one name (say
    ``app/test_present.py`` and ``e2e/test_present.py``) stop the whole run at collection."""
    names = [path.name for path in (ROOT / "tests").rglob("test_*.py")]
    assert sorted({n for n in names if names.count(n) > 1}) == []
