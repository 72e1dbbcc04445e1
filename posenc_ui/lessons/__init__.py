r"""One folder per teaching page (a lesson): ``posenc_ui/lessons/<page_id>/``, the whole page but its script.

A lesson's folder holds ``view.py`` (its parameters, figure recipes — a cached core call, then a pure builder —,
checks, explain panel, ``VIEW`` and its reading-path entry ``PAGE = PageEntry(script, VIEW, preview)``;
:mod:`posenc_ui.catalog`), ``figures.py`` (its pure figure builders), ``words.en.json`` and ``words.zh.json`` (its
words, :mod:`posenc_ui.i18n`), and, for a long page, a sibling module per section that its view imports
(``rope/long_range.py``, ``extension/layers.py``, ``lab/runner.py``). The lessons use the kit around them:
:mod:`posenc_ui.lesson` (View, PageEntry, Check), :mod:`posenc_ui.figures` (style, heatmaps, frames) and
:mod:`posenc_ui.frame`.

:data:`PAGES` collects every folder's ``PAGE`` in reading order and :data:`VIEWS` their views; the catalog, the export
command and the tests walk them. The home page's view declares no ``PAGE``: it is the app's front door, not a step of
the reading path. View modules import no torch at module level: the lab's view imports it lazily.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from ..lesson import PageEntry, View


def _declared() -> tuple[PageEntry, ...]:
    r"""Every ``PAGE`` declared by a lesson's ``view.py``, in reading order."""
    folders = sorted(path.parent.name for path in Path(__file__).parent.glob("*/view.py"))
    modules = [importlib.import_module(f"{__name__}.{name}.view") for name in folders]
    entries = [m.PAGE for m in modules if isinstance(getattr(m, "PAGE", None), PageEntry)]
    return tuple(sorted(entries, key=lambda page: page.number))


PAGES: tuple[PageEntry, ...] = _declared()
VIEWS: tuple[View, ...] = tuple(page.view for page in PAGES)

__all__ = ["PAGES", "VIEWS"]
