r"""One registry entry per page: every page script is declared once, beside its view, and the rest derives from it.

A new page is four things — its script, its view (which declares ``PAGE``), its figures module and its words (one
file per language) — so these tests check that nothing else has to be written: the entry's script exists and opens
that view, its preview is one of the view's figures, and every key the page asks for is in its words or the shared
ones, in both languages.
"""

from __future__ import annotations

import importlib
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from posenc_ui import catalog
from posenc_ui.i18n import LANGS, LESSONS_DIR, page_words, shared_words
from posenc_ui.state import ChoiceParam, defaults

ROOT = catalog.ROOT
SCRIPTS = sorted(path.relative_to(ROOT).as_posix() for path in ROOT.glob("pages/*.py"))
PAGES = catalog.PAGES
TEXT_CALL = re.compile(r"""page\.(?:text|heading)\(\s*["']([a-z_]+)["']""")


def words(path: Path) -> dict[str, str]:
    return json.loads(path.read_text(encoding="utf-8"))


def test_every_page_script_has_exactly_one_entry() -> None:
    declared = Counter(page.script for page in PAGES)
    assert sorted(declared) == SCRIPTS
    assert set(declared.values()) == {1}
    assert len({page.id for page in PAGES}) == len(PAGES)


def test_the_reading_path_is_numbered_one_to_n_by_the_script_names() -> None:
    assert [page.number for page in PAGES] == list(range(1, len(PAGES) + 1))


#: The paths links already shared point at: a page's URL path is its script's name, which must not change.
SHARED_PATHS = {
    "why": "Why_position",
    "first": "First_attempts",
    "sinusoidal": "Sinusoidal",
    "learned": "Learned_absolute",
    "relative": "Relative",
    "rope": "RoPE",
    "extension": "Context_extension",
    "alibi": "ALiBi",
    "real": "Real_model",
    "lab": "Extrapolation_lab",
    "compare": "Compare",
}


def test_url_paths_and_so_share_links_are_unchanged() -> None:
    assert {page.id: page.url_path for page in PAGES if page.id in SHARED_PATHS} == SHARED_PATHS


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.id)
def test_the_entry_lives_in_the_view_module_its_script_opens(page) -> None:
    assert importlib.import_module(f"posenc_ui.lessons.{page.id}.view").PAGE is page
    assert f"from posenc_ui.lessons.{page.id}.view import" in (ROOT / page.script).read_text(encoding="utf-8")


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.id)
def test_the_preview_is_a_figure_of_the_view_and_its_image_exists(page) -> None:
    assert page.preview in page.view.figures
    # Written from the entry by `python -m posenc_ui.export --previews --out assets/previews`.
    assert page.preview_file.exists() and catalog.preview(page) == page.preview_file


def keys_needed(page) -> set[str]:
    r"""Every key the page asks for: title, promise, key takeaway, widget and option labels, checks, its script's
    text calls."""
    keys = {page.title_key, page.promise_key, f"{page.id}.key_takeaway"}
    for param in page.view.params:
        keys.add(f"{page.id}.{param.name}")
        if isinstance(param, ChoiceParam) and isinstance(param.options[0], str):
            keys.update(f"{param.labels or f'{page.id}.{param.name}'}.{option}" for option in param.options)
    values = defaults(page.view.params)
    keys.update(check(values).key for check in page.view.checks.values())
    keys.update(f"{page.id}.{name}" for name in TEXT_CALL.findall((ROOT / page.script).read_text(encoding="utf-8")))
    return keys


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.id)
def test_every_key_a_page_needs_is_in_its_words_or_the_shared_ones(page, lang: str) -> None:
    own = words(page.words(lang))
    assert all(key.startswith((f"{page.id}.", f"page.{page.id}.")) for key in own), "a page's file holds its own keys"
    missing = sorted(keys_needed(page) - set(own) - set(words(shared_words(lang))))
    assert not missing


def test_every_lesson_folder_is_a_page_with_its_view_and_its_words_in_both_languages() -> None:
    folders = {path.parent.name for path in LESSONS_DIR.glob("*/__init__.py")}
    assert folders == {page.id for page in PAGES} | {"home"}
    assert {path.name for path in LESSONS_DIR.glob("*/*.json")} == {f"words.{lang}.json" for lang in LANGS}
    for page_id in folders:
        assert (LESSONS_DIR / page_id / "view.py").is_file(), page_id
        zh, en = (words(page_words(page_id, lang)) for lang in ("zh", "en"))
        assert set(zh) == set(en), page_id


def test_no_page_script_calls_streamlit_itself() -> None:
    r"""Scripts only lay out what the page API offers; widgets, state and errors are the frame's job."""
    reaching = [
        script
        for script in [*SCRIPTS, catalog.HOME_SCRIPT]
        if re.search(r"\bst\.|\bimport streamlit|\bfrom streamlit\b", (ROOT / script).read_text(encoding="utf-8"))
    ]
    assert not reaching
