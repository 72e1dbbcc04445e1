r"""What an AppTest run drew, read back for the tests: the charts the page sent, the live check lines it showed, and
the lines and widths of a wrapped figure title. Test helpers only; the app never calls them."""

from __future__ import annotations

import json
import re
from typing import Any

from posenc_ui.figures.style import _TOKEN, _units
from posenc_ui.frame.chart import NAME


def sent_charts(at: Any) -> list[dict[str, Any]]:
    r"""``{"figure", "config"}`` of every chart an AppTest run ``at`` drew, in page order."""
    drawn = [el.proto for el in at.get("bidi_component") if el.proto.component_name == NAME]
    return [json.loads(proto.bytes) for proto in drawn if proto.bytes]  # the preload sends nothing


def shown_checks(at: Any) -> list[str]:
    r"""Every live check line an AppTest run ``at`` drew (``✓ …`` or ``✗ …``): the passing ones, then the failing
    ones."""
    lines = [line for box in [*at.success, *at.error] for line in box.value.split("\n\n")]
    return [line for line in lines if line.startswith(("✓", "✗"))]


def title_lines(title: str) -> list[str]:
    r"""The lines of a (wrapped) title as plain text, tags removed."""
    return [re.sub(r"<[^>]*>", "", line) for line in title.split("<br>")]


def line_units(line: str) -> int:
    r"""The width of one plain title line in :data:`~posenc_ui.figures.style.TITLE_UNITS` units."""
    return sum(_units(token) for token in _TOKEN.findall(line))
