r"""The reading path: every page of the app in order, built or still to come.

Titles and one-line promises live in the i18n catalogues under ``page.<id>.title`` / ``page.<id>.promise``;
a page whose script does not exist yet is shown as "coming soon" (a card without a link). The URL path of a built
page is what Streamlit derives from its file name in ``pages/`` (``pages/3_Sinusoidal.py`` → ``/Sinusoidal``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HOME_SCRIPT = "app.py"


@dataclass(frozen=True)
class PageInfo:
    r"""One page: its id (i18n prefix), number in the reading path, and script relative to the repo root."""

    id: str
    number: int
    script: str | None = None

    @functools.cached_property  # asked a dozen times a rerun; files land between server starts, not during one
    def built(self) -> bool:
        r"""Whether the page's script exists: pages appear in the navigation as their files land."""
        return self.script is not None and (ROOT / self.script).exists()

    @functools.cached_property
    def url_path(self) -> str:
        r"""The path Streamlit serves the page under (the file name without its ordering prefix)."""
        if not self.built:
            return ""
        return Path(self.script).stem.split("_", 1)[1]


PAGES: tuple[PageInfo, ...] = (
    PageInfo("why", 1, "pages/1_Why_position.py"),
    PageInfo("first", 2, "pages/2_First_attempts.py"),
    PageInfo("sinusoidal", 3, "pages/3_Sinusoidal.py"),
    PageInfo("learned", 4, "pages/4_Learned_absolute.py"),
    PageInfo("relative", 5, "pages/5_Relative.py"),
    PageInfo("rope", 6, "pages/6_RoPE.py"),
    PageInfo("extension", 7, "pages/7_Context_extension.py"),
    PageInfo("alibi", 8, "pages/8_ALiBi.py"),
    PageInfo("lab", 9, "pages/9_Extrapolation_lab.py"),
    PageInfo("compare", 10, "pages/10_Compare.py"),
)
BY_ID: dict[str, PageInfo] = {page.id: page for page in PAGES}


PREVIEWS = ROOT / "assets" / "previews"


def preview(page: PageInfo) -> Path | None:
    r"""The small, language-neutral preview image of a built page (``assets/previews/<id>.png``), if present."""
    path = PREVIEWS / f"{page.id}.png"
    return path if page.built and path.exists() else None


def next_page(page_id: str) -> PageInfo | None:
    r"""The built page after ``page_id`` in reading order, if any."""
    later = [p for p in PAGES if p.number > BY_ID[page_id].number and p.built]
    return later[0] if later else None
