r"""The code keeps the shape the house style asks for: one colour vocabulary, test files with unique names.

Size is a guideline, not a test (issue 33): a cap on lines was once met by packing lines (``# fmt: skip``) and by
splitting modules that held one idea, which hurt more than the cap helped. ``ruff format`` lays out every line.

- Every colour is spelled once, in :mod:`posenc_ui.figures.style`, under the name of what it means on screen; the one
  copy that cannot import it (Streamlit's theme in ``.streamlit/config.toml``) is checked against it here.
"""

from __future__ import annotations

import io
import re
import tokenize
import tomllib
from pathlib import Path

import pytest

from posenc_ui.figures import style

ROOT = Path(__file__).resolve().parents[1]

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


def _comments(path: Path) -> list[tuple[int, str]]:
    r"""(line, text) of every comment in ``path``: what ``ruff format`` reads as a directive."""
    tokens = tokenize.generate_tokens(io.StringIO(path.read_text(encoding="utf-8")).readline)
    return [(tok.start[0], tok.string) for tok in tokens if tok.type == tokenize.COMMENT]


def test_ruff_format_lays_out_every_line() -> None:
    r"""No ``fmt: skip`` / ``fmt: off`` directive: lines are not packed by hand to meet a size (issue 33)."""
    directives = re.compile(r"#\s*fmt:\s*(skip|off)\b")
    found = [
        f"{_name(path)}:{line}"
        for path in _sources("posenc_core", "posenc_ui", "pages", "app.py", "bench", "tests")
        for line, text in _comments(path)
        if directives.match(text)
    ]
    assert found == []


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
    [
        (style.WHITE, 0.8, "rgba(255,255,255,0.8)"),
        (style.BLUE, style.BAND_ALPHA, "rgba(0,114,178,0.18)"),
        (style.GREY, 0.2, "rgba(140,140,140,0.2)"),
        (style.BLACK, 0, "rgba(0,0,0,0)"),
    ],
)
def test_translucent_colours_are_the_css_plotly_reads(colour: str, alpha: float, css: str) -> None:
    assert style.translucent(colour, alpha) == css


def test_test_modules_have_unique_names() -> None:
    r"""The test folders are not packages, so pytest imports each file by its bare name: two files with one name (say
    ``app/test_present.py`` and ``e2e/test_present.py``) stop the whole run at collection."""
    names = [path.name for path in (ROOT / "tests").rglob("test_*.py")]
    assert sorted({n for n in names if names.count(n) > 1}) == []
