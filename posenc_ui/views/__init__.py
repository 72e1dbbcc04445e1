r"""One module per teaching page: its parameters, figure recipes (cached core call → pure builder), checks.

Each page's module exports ``VIEW`` and its reading-path entry ``PAGE = PageEntry(script, VIEW, preview)``
(:mod:`posenc_ui.catalog`). :data:`PAGES` collects those entries in reading order and :data:`VIEWS` their views; the
catalog, the export command and the tests walk them. A module without ``PAGE`` is no page: it holds part of one
(``rope_long_range``, ``rope_inputs``, ``extension_models``), imported by that page's view. View modules import no
torch at module level: the lab's view imports it lazily.
"""

from __future__ import annotations

import importlib
import pkgutil

from .base import Check, Explain, PageEntry, View


def _declared() -> tuple[PageEntry, ...]:
    r"""Every ``PAGE`` declared by a module of this package, in reading order."""
    modules = [importlib.import_module(f"{__name__}.{m.name}") for m in pkgutil.iter_modules(__path__)]
    entries = [m.PAGE for m in modules if isinstance(getattr(m, "PAGE", None), PageEntry)]
    return tuple(sorted(entries, key=lambda page: page.number))


PAGES: tuple[PageEntry, ...] = _declared()
VIEWS: tuple[View, ...] = tuple(page.view for page in PAGES)

__all__ = ["PAGES", "VIEWS", "Check", "Explain", "PageEntry", "View"]
