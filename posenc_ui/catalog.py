r"""The reading path: one :class:`PageEntry` per page, declared beside the page's view, and what derives from it.

A teaching page is two places: its script ``pages/<n>_<Name>.py`` and its lesson folder ``posenc_ui/lessons/<id>/``,
which holds its view ``view.py`` (declaring ``PAGE = PageEntry(...)``), its figure builders ``figures.py`` and its words
``words.{en,zh}.json`` (:mod:`posenc_ui.lessons`). Everything else is read off the entry, never written again:

* the number in the reading path and the URL path come from the script's file name (``pages/3_Sinusoidal.py`` →
  3, ``/Sinusoidal``: Streamlit derives the path, so share links depend on the file name alone);
* the id is the view's ``page_id``: the i18n prefix (``<id>.intro``, ``page.<id>.title``), the widget-key prefix,
  the words files and the home card's image ``assets/previews/<id>.png``;
* the preview names the figure of the view that the home card shows.

:class:`PageEntry` lives beside :class:`~posenc_ui.lesson.View` in the kit and the views import it from there, so
imports go one way: this module reads the views' entries (:data:`PAGES` in reading order, :data:`BY_ID`), never
the reverse.
"""

from __future__ import annotations

from pathlib import Path

from .lesson import PageEntry
from .lessons import PAGES
from .paths import PREVIEWS, ROOT

HOME_SCRIPT = "app.py"
BY_ID: dict[str, PageEntry] = {page.id: page for page in PAGES}

__all__ = ["BY_ID", "HOME_SCRIPT", "PAGES", "PREVIEWS", "ROOT", "PageEntry", "next_page", "preview"]


def preview(page: PageEntry) -> Path | None:
    r"""The page's home-card image, if it has been written."""
    return page.preview_file if page.preview_file.exists() else None


def next_page(page_id: str) -> PageEntry | None:
    r"""The page after ``page_id`` in reading order, if any."""
    later = [p for p in PAGES if p.number > BY_ID[page_id].number]
    return later[0] if later else None
