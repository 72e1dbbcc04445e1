r"""The reading path: one :class:`PageEntry` per page, declared beside the page's view, and what derives from it.

A teaching page is four things: its script ``pages/<n>_<Name>.py``, its view ``posenc_ui/views/<id>.py`` (which
declares ``PAGE = PageEntry(...)``), its figures module and its words ``assets/i18n/pages/<id>.{en,zh}.json``.
Everything else is read off the entry, never written again:

* the number in the reading path and the URL path come from the script's file name (``pages/3_Sinusoidal.py`` →
  3, ``/Sinusoidal``: Streamlit derives the path, so share links depend on the file name alone);
* the id is the view's ``page_id``: the i18n prefix (``<id>.intro``, ``page.<id>.title``), the widget-key prefix,
  the words files and the home card's image ``assets/previews/<id>.png``;
* the preview names the figure of the view that the home card shows.

:data:`PAGES` (in reading order) and :data:`BY_ID` are collected from the view modules the first time they are
asked for: the view modules import this one for :class:`PageEntry`, so it cannot import them when it loads.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .i18n import PAGE_WORDS

if TYPE_CHECKING:
    from .views.base import View

ROOT = Path(__file__).resolve().parent.parent
HOME_SCRIPT = "app.py"
PREVIEWS = ROOT / "assets" / "previews"


@dataclass(frozen=True)
class PageEntry:
    r"""One page of the reading path: its script (relative to the repo root), its view and its home-card figure."""

    script: str
    view: View
    preview: str

    @property
    def id(self) -> str:
        r"""The view's ``page_id``: i18n prefix, widget-key prefix, words and preview file names."""
        return self.view.page_id

    @functools.cached_property  # asked a dozen times a rerun
    def number(self) -> int:
        r"""The place in the reading path: the script name's prefix (``pages/3_Sinusoidal.py`` → 3)."""
        return int(Path(self.script).stem.split("_", 1)[0])

    @functools.cached_property
    def url_path(self) -> str:
        r"""The path Streamlit serves the page under: the file name without its number (``/Sinusoidal``)."""
        return Path(self.script).stem.split("_", 1)[1]

    @property
    def title_key(self) -> str:
        return f"page.{self.id}.title"

    @property
    def promise_key(self) -> str:
        r"""The one-line promise on the page's home card."""
        return f"page.{self.id}.promise"

    def words(self, lang: str) -> Path:
        r"""The file holding this page's strings in ``lang`` (its title and promise included)."""
        return PAGE_WORDS / f"{self.id}.{lang}.json"

    @property
    def preview_file(self) -> Path:
        r"""The home card's small, language-neutral image (``python -m posenc_ui.export --previews`` writes it)."""
        return PREVIEWS / f"{self.id}.png"


def __getattr__(name: str) -> object:
    r"""``PAGES`` and ``BY_ID``, collected on first use (PEP 562) from the view modules' ``PAGE`` entries."""
    if name == "PAGES":
        return _pages()
    if name == "BY_ID":
        return _by_id()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@functools.cache
def _pages() -> tuple[PageEntry, ...]:
    from .views import PAGES

    return PAGES


@functools.cache
def _by_id() -> dict[str, PageEntry]:
    return {page.id: page for page in _pages()}


def preview(page: PageEntry) -> Path | None:
    r"""The page's home-card image, if it has been written."""
    return page.preview_file if page.preview_file.exists() else None


def next_page(page_id: str) -> PageEntry | None:
    r"""The page after ``page_id`` in reading order, if any."""
    later = [p for p in _pages() if p.number > _by_id()[page_id].number]
    return later[0] if later else None
