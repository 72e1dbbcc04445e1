r"""AppTest fixtures: the real app, started from ``app.py`` and switched to a page, in a chosen language."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from streamlit.testing.v1 import AppTest

from posenc_ui import catalog

#: Seconds an AppTest run of a page that runs a real model may take (its first run fetches and loads the model).
MODEL_TIMEOUT = 900


@pytest.fixture
def open_page() -> Callable[..., AppTest]:
    r"""``open_page(script, lang=..., params=..., context=...)``: an AppTest that has run that page once.

    ``script=None`` is the home page. Query params are set before the first run, as a deep link would.
    """

    def _open(
        script: str | None = None,
        *,
        lang: str | None = None,
        params: dict[str, str] | None = None,
        context: dict | None = None,
    ) -> AppTest:
        entry = next((page for page in catalog.PAGES if page.script == script), None)
        # A page that runs a real model loads it on its first run (seconds in CI, minutes on a loaded machine)
        timeout = MODEL_TIMEOUT if entry is not None and entry.runs_model else 30
        at = AppTest.from_file(str(catalog.ROOT / catalog.HOME_SCRIPT), default_timeout=timeout)
        at.context.update(context or {})
        if script is not None:
            at.switch_page(script)
        query = dict(params or {})
        if lang is not None:
            query["lang"] = lang
        at.query_params.update(query)
        at.run()
        return at

    return _open
