r"""The home page has no parameters and no figures of its own: only the frame and the reading path."""

from __future__ import annotations

from ...lesson import Explain, View

VIEW = View(page_id="home", params=(), figures={}, checks={}, explain=Explain(latex=(), sources=(), paper=""))
