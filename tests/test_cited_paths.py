r"""Every file or folder of this repository that its docs, code or tests name exists.

The design notes and a docstring cited the page registry's test by a name it never had (``test_registry.py`` instead of
``test_page_registry.py``), sending readers to nothing; this test reads every tracked text file for paths under the
repository's top-level folders and looks each up.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TOP = ("tests", "docs", "posenc_core", "posenc_ui", "bench", "pages", "assets", "static", r"\.ci", r"\.streamlit")
#: A path ends where a character that no path here holds follows; one that goes on as a pattern (``{en,zh}``,
#: ``<lang>``, ``*``) names a family of files, not one, and is not looked up.
CITED = re.compile(rf"(?<![\w/.-])((?:{'|'.join(TOP)})/[\w./-]+)(?![\w./-]|[{{<*])")

#: Paths named on purpose although absent: an example, a thing kept out, a file that may or may not exist.
NOT_FILES = {
    "pages/x.py": "an example path in a comment on st.page_link",
    "posenc_ui/assets": "the packaging test says it is left out of the wheel",
    "tests/__init__.py": "the import fallback for tests run as a package or as plain folders",
    "docs/model_layers.md": "the per-layer reader's notes, arriving from their own branch",
}


def _cited() -> dict[str, set[str]]:
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    cited: dict[str, set[str]] = {}
    for name in tracked.split():
        if name.startswith("static/") or name.endswith((".png", ".ico", ".json", ".js")):
            continue
        try:
            text = (ROOT / name).read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
            continue
        for found in CITED.findall(text):
            cited.setdefault(found.rstrip(".,:;'\"`/"), set()).add(name)
    return cited


def test_every_cited_path_exists() -> None:
    missing = {path: sorted(where) for path, where in _cited().items() if not (ROOT / path).exists()}
    assert {path: where for path, where in missing.items() if path not in NOT_FILES} == {}


#: ``docs/streamlit.md, "Multipage"`` or ``[streamlit.md](streamlit.md), "Multipage"``: a section of one of the docs.
SECTION = re.compile(r"\b(\w+)\.md\]?(?:\([^)]*\))?,? \"([^\"]+)\"")


def _cited_sections() -> set[tuple[str, str]]:
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    texts = [(ROOT / name).read_text(encoding="utf-8") for name in tracked.split() if name.endswith((".py", ".md"))]
    return {found for text in texts for found in SECTION.findall(text) if (ROOT / "docs" / f"{found[0]}.md").is_file()}


def test_every_cited_section_of_the_docs_is_a_heading_there() -> None:
    cited = _cited_sections()
    assert ("streamlit", "Multipage") in cited  # the finder finds
    headings = {
        name: re.findall(r"^#+ (.+)$", (ROOT / "docs" / f"{name}.md").read_text(encoding="utf-8"), flags=re.M)
        for name, _ in cited
    }
    missing = [(name, section) for name, section in cited if not any(h.startswith(section) for h in headings[name])]
    assert missing == []


def test_the_finder_sees_a_cited_path() -> None:
    cited = _cited()
    assert "tests/app/test_page_registry.py" in cited and "docs/benchmarks.md" in cited
