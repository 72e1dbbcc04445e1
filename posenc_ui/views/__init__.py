r"""One module per teaching page: its parameters, figure recipes (cached core call → pure builder), checks.

:data:`VIEWS` lists the built pages in reading order (module ``views/<page id>.py`` exporting ``VIEW``); the export
command and the tests walk it. View modules import no torch at module level: the lab's view imports it lazily.
"""

from __future__ import annotations

import importlib
from pathlib import Path

from .. import catalog
from .base import Check, Explain, View

VIEWS: tuple[View, ...] = tuple(
    importlib.import_module(f".{page.id}", __name__).VIEW
    for page in catalog.PAGES
    if page.built and (Path(__file__).parent / f"{page.id}.py").exists()
)

__all__ = ["VIEWS", "Check", "Explain", "View"]
