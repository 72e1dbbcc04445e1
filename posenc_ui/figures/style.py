r"""One colour and axis vocabulary for every figure of the app (and its exports).

Colours are Okabe & Ito's palette (safe for the common colour-vision deficiencies); each encoding keeps its colour
on every page. Every colour of the app is spelled here and nowhere else (``tests/test_code_shape.py`` checks): the
palette by hue, the neutrals and every reuse by what it means on screen. Signed quantities (encodings, rotation
matrices) use a diverging blue–red scale centred on 0; non-negative ones (attention weights) use viridis. Axis
titles come from the ``axis.*`` i18n keys so "position p" means the same thing everywhere. The template is
deliberately small: it travels with every figure.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Collection
from types import MappingProxyType

import plotly.graph_objects as go
from plotly.colors import get_colorscale

from posenc_core.families import FAMILIES

from ..i18n import t
from .built import BuiltFigure, wire

BLUE, ORANGE, GREEN, VERMILION = "#0072B2", "#E69F00", "#009E73", "#D55E00"
PURPLE, SKY, YELLOW, BLACK, GREY = "#CC79A7", "#56B4E9", "#F0E442", "#000000", "#8C8C8C"
PALETTE: tuple[str, ...] = (BLUE, ORANGE, GREEN, VERMILION, PURPLE, SKY, BLACK)
# Three more for the lab's 2025 designs, from Paul Tol's "muted" scheme (also safe for colour-vision deficiencies;
# Okabe & Ito's yellow is too pale for a line on white): the RoPE variants a green's neighbours, FoX its own hue.
OLIVE, INDIGO, WINE = "#999933", "#332288", "#882255"

_FAMILY_COLOURS = {
    "none": GREY,
    "sinusoidal": BLUE,
    "learned": ORANGE,
    "shaw": SKY,
    "t5": PURPLE,
    "rope": GREEN,
    "alibi": VERMILION,
    "p_rope": OLIVE,
    "hybrid": INDIGO,
    "fox": WINE,
}
#: Each encoding family, the same colour on every page: one per entry of the family registry (a family without one
#: is a KeyError here, at import; a colour for no family is refused too).
ENCODING_COLOURS = MappingProxyType({name: _FAMILY_COLOURS[name] for name in FAMILIES})
if set(_FAMILY_COLOURS) != set(FAMILIES):
    raise KeyError(f"colours for families not in the registry: {sorted(set(_FAMILY_COLOURS) - set(FAMILIES))}")
SIN_COLOUR, COS_COLOUR = BLUE, ORANGE
WALL_COLOUR = VERMILION  # where a learned table ends
#: Streamlit's theme colour (buttons, sliders, links): ``.streamlit/config.toml`` repeats it as ``primaryColor``.
PRIMARY = BLUE

# Neutrals, by what they are on screen.
WHITE = "#FFFFFF"
INK = "#262730"  # Streamlit's text colour: all text, and the dark marks below
SELECTED = INK  # the outline of the selected bar or head, the chosen cell and its diagonal, the position asked for
THEORY = INK  # what theory predicts or a source states, drawn over what was measured
GRID, ZERO_LINE = "#E6E6E6", "#BDBDBD"
GUIDE = ZERO_LINE  # a line that only guides the eye: a clock's face, a row of dots' thread
FAINT_RING = "#D0D0D0"  # the rings of RoPE's toy clock
NOT_FOUND = FAINT_RING  # a bar standing for "none within reach"
SEEN_IN_TRAINING = "#D9D9D9"  # angles the training length already turned a pair through
OFF_CELL = "#F2F2F2"  # a 0 bit, an unselected one-hot row
EXPORT_BORDER = "#ddd"  # the thin frame around each picture of the exported static site (CSS)


def translucent(colour: str, alpha: float) -> str:
    r"""``colour`` (``"#RRGGBB"``) at opacity ``alpha``, as the CSS ``rgba(r,g,b,a)`` that plotly.js reads."""
    r, g, b = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


TRANSPARENT = translucent(BLACK, 0)  # an outline that is not drawn (on the bars not selected)
BAND_ALPHA = 0.18  # a band of spread (mean ± std, lowest to highest seed) over its line

# Spelled out as (position, colour) stops: "RdBu_r" is a name only plotly.py knows, and figures go to plotly.js
# unvalidated (see .built).
DIVERGING = tuple(tuple(stop) for stop in get_colorscale("RdBu_r"))  # blue < 0 < red, symmetric about 0 (zmid=0)
SEQUENTIAL = tuple(tuple(stop) for stop in get_colorscale("Viridis"))
BITS = ((0.0, OFF_CELL), (1.0, BLUE))  # a 0 bit is pale, a 1 bit blue
ONE_HOT = ((0.0, OFF_CELL), (1.0, INK))  # the selected row of a one-hot is dark

FONT = '"Noto Sans CJK SC", "Noto Sans SC", "PingFang SC", "Microsoft YaHei", "Noto Sans", Arial, sans-serif'
HEIGHT = 380  # px: readable on a phone held upright, two fit on a laptop screen
TITLE_SIZE = 15  # px
#: A title line holds this many units (a Latin letter or digit 1, a Chinese character 2): about 330 px at 15 px,
#: the width of a figure on a phone held upright (390 px less Streamlit's padding). Plotly never wraps a title.
TITLE_UNITS = 42
TITLE_LINE = 20  # px a wrapped title line adds to the top margin
TOP_MARGIN = 48  # px, the template's
TITLE_PAD = 10  # px from the figure's top edge to its title's, whatever the figure's height
TITLE_LIFT = 11  # px plotly draws a title of several lines higher than one of one line (see title_layout)
#: px one unit of :data:`TITLE_UNITS` takes at :data:`TITLE_SIZE` (42 units in about 330 px).
UNIT_PX = 330 / TITLE_UNITS
#: The widths, in units, a title is also wrapped at for a figure drawn wider than a phone (``layout.meta.titles``):
#: the chart component (:mod:`posenc_ui.frame.chart`) and the exports (:func:`rewrap`) pick the widest that fits.
TITLE_WIDTHS = (TITLE_UNITS, 56, 72, 96, 128, 170)

_WIDE = "\u2e80-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef"  # CJK, full-width forms and punctuation
_WORD = rf"[^\s<{_WIDE}]+"
#: A tag, a run of spaces, one wide character, or a word; "base = 10000" counts as one word (never split at "=").
_TOKEN = re.compile(rf"<[^>]*>|{_WORD}(?: ?[=≈−+×] ?{_WORD})+|\s+|[{_WIDE}]|{_WORD}")
_NO_BREAK_BEFORE = set("，。、；：！？）」』》〉,.;:!?)")
_NO_BREAK_AFTER = set("（「『《〈(")
LEGEND_UNITS = TITLE_UNITS - 6  # a legend entry's line: the width less its symbol

TEMPLATE = go.layout.Template(
    layout={
        "font": {"family": FONT, "size": 13, "color": INK},
        # From the figure's left edge, not the plot's: a phone has no 56 px to spare before a title.
        "title": {
            "font": {"size": TITLE_SIZE},
            "x": 0.0,
            "xref": "container",
            "xanchor": "left",
            "pad": {"l": 4, "t": TITLE_PAD},
            "y": 1.0,
            "yanchor": "top",
        },
        "paper_bgcolor": "white",
        "plot_bgcolor": "white",
        "colorway": list(PALETTE),
        "margin": {"l": 56, "r": 16, "t": TOP_MARGIN, "b": 48},
        # "allow": plotly.js's default ("hide past div") measures every tick label's box on every draw to hide the
        # ones past the figure's edge, which automargin already keeps inside: half of a redraw's script time in
        # Chromium (82 of 172 ms a move on page 9; docs/benchmarks.md).
        "xaxis": {"gridcolor": GRID, "zerolinecolor": ZERO_LINE, "automargin": True, "ticklabeloverflow": "allow"},
        "yaxis": {"gridcolor": GRID, "zerolinecolor": ZERO_LINE, "automargin": True, "ticklabeloverflow": "allow"},
        "legend": {
            "orientation": "h",
            "xref": "container",
            "x": 0.0,
            "xanchor": "left",
            "yref": "container",
            "y": 0.0,
            "yanchor": "bottom",
        },
        "hoverlabel": {"font": {"family": FONT}},
    }
)
#: :data:`TEMPLATE` as every figure sends it, encoded once. A figure's ``layout.template`` is this dict, not the
#: plotly object: :func:`~.built.wire` would otherwise ask the object for its JSON on every figure built, a deep
#: copy of the whole template (68 µs a figure against 15 µs for this dict; a dozen figures on a move of RoPE's d).
TEMPLATE_SPEC = wire(TEMPLATE)


#: An axis that is not drawn at all (clock faces, rings: only the picture matters).
HIDDEN_AXIS = {"visible": False, "showgrid": False, "zeroline": False}


def fit_height(x_span: float, y_span: float) -> dict:
    r"""``layout.meta`` of a figure drawn to scale (``scaleanchor``, one subplot) over axis ranges of ``x_span`` ×
    ``y_span`` data units: the chart component (:mod:`posenc_ui.frame.chart`) draws it no taller than its content
    needs at the column's width, plot width · y_span / x_span + the top and bottom margins, and never taller than
    ``layout.height``.

    A figure of fixed height drawn to scale in a column narrower than the height allows (a phone) shrinks to fit the
    width, and plotly centres it: the rest of the height is blank, above and below it.
    """
    return {"fit": {"aspect": y_span / x_span}}


def legend_below() -> dict:
    r"""A horizontal legend at the foot of the figure, under the axis title (the template's default too).

    Placed in the figure's own (container) coordinates, so plotly grows the bottom margin by as many rows as the
    legend wraps into on a narrow screen; a legend at the top would sit on the title, and one a fixed fraction of
    the plot below it would sit on the axis title once a phone shrinks the plot.
    """
    return {
        "orientation": "h",
        "xref": "container",
        "x": 0.0,
        "xanchor": "left",
        "yref": "container",
        "y": 0.0,
        "yanchor": "bottom",
    }


def _wide(text: str) -> bool:
    return bool(re.match(f"[{_WIDE}]", text))


_WIDE_CHAR = re.compile(f"[{_WIDE}]")


def _units(token: str) -> int:
    if token.startswith("<"):
        return 0
    return len(token) + len(_WIDE_CHAR.findall(token))  # a wide character takes two


@functools.lru_cache(maxsize=4096)  # a move rebuilds a dozen figures, most titles unchanged (up to ~35 µs each)
def wrap_title(title: str, units: int = TITLE_UNITS) -> str:
    r"""``title`` with ``<br>`` breaks so that no line is wider than ``units`` (see :data:`TITLE_UNITS`), in as few
    lines as that allows, and those lines as even as they can be: a title one word too long for one line is split
    in the middle, not into a full line and a lone "0".

    Breaks fall at spaces, or between two Chinese characters (never before closing punctuation, never after an
    opening one). Chinese breaks after a comma, colon or other mark that ends a phrase, at a space or before an
    opening bracket rather than inside a phrase, where that adds no line and widens no line past the plain wrap's
    widest. "name = value" and "a − b" are never split; a line break the title already has is kept. Tags
    (``<sub>``) take no room and are never split.
    """
    parts = _parts(title)
    greedy = _wrap(parts, units)
    fewest = greedy.count("<br>")
    if fewest == len(parts) - 1:  # every part fits on one line
        return greedy
    even = _narrowest(parts, units, fewest, prefer=False)
    widest = _widest(greedy)
    if _bad_breaks(even) and _wrap(parts, widest, prefer=True).count("<br>") <= fewest:  # no extra line, no wider
        phrased = _narrowest(parts, widest, fewest, prefer=True)
        if _bad_breaks(phrased) < _bad_breaks(even) and _widest(phrased) <= widest:
            return phrased
    return even


def _widest(wrapped: str) -> int:
    return max(_units(line) for line in _TAG.sub("", wrapped).split("<br>"))


_TAG = re.compile(r"<(?!br>)[^>]*>")


def _narrowest(parts: list[list[tuple[str, int]]], units: int, fewest: int, *, prefer: bool) -> str:
    r"""The wrap at the narrowest width up to ``units`` that still needs no more than ``fewest`` breaks (greedy lines
    are monotone in it) and, with ``prefer``, breaks no more Chinese phrases than the wrap at ``units`` does."""
    bad = _bad_breaks(_wrap(parts, units, prefer=prefer))
    narrow, wide = 1, units
    while narrow < wide:
        middle = (narrow + wide) // 2
        wrapped = _wrap(parts, middle, prefer=prefer)
        if wrapped.count("<br>") <= fewest and _bad_breaks(wrapped) <= bad:
            wide = middle
        else:
            narrow = middle + 1
    return _wrap(parts, wide, prefer=prefer)


def _parts(title: str) -> list[list[tuple[str, int]]]:
    r"""Each part of ``title`` between the breaks it already has, as (token, width) pairs."""
    return [[(token, _units(token)) for token in _TOKEN.findall(part)] for part in title.split("<br>")]


#: Chinese punctuation a line had better end after (a phrase ends there), rather than between two characters of a word.
_GOOD_END = set("，。、；：！？）」』》")
#: A line whose last good break leaves it at least this fraction of the width breaks there instead of mid-phrase.
_GOOD_FILL = 0.5


def _bad_breaks(wrapped: str) -> int:
    r"""How many of the breaks in ``wrapped`` fall between two Chinese characters mid-phrase (not after a mark of
    :data:`_GOOD_END`, not before an opening bracket)."""
    pairs = re.findall(rf"([{_WIDE}])<br>([{_WIDE}])", wrapped)
    return sum(1 for before, after in pairs if before not in _GOOD_END and after not in _NO_BREAK_AFTER)


def _good_break(tokens: list[tuple[str, int]], units: int) -> int:
    r"""Where in the line ``tokens`` (a line of Chinese about to overflow) to break instead of at its end: the index
    of the first token of the next line, just after the last mark of :data:`_GOOD_END`, at a space, or before an
    opening bracket, as long as what stays is at least ``_GOOD_FILL`` of ``units``; 0 if there is no such place."""
    width = 0
    best = 0
    for k, (token, size) in enumerate(tokens):
        if k and width >= _GOOD_FILL * units:
            before = tokens[k - 1][0]
            if before[-1] in _GOOD_END or token.isspace() or token[0] in _NO_BREAK_AFTER:
                best = k
        width += size
    return best


def _wrap(parts: list[list[tuple[str, int]]], units: int, *, prefer: bool = False) -> str:
    r"""Greedy wrapping of the (token, width) lists of a title's parts: each line takes every token that still fits
    within ``units``. With ``prefer``, a line that would break between two Chinese characters breaks at its last
    punctuation mark, space or opening bracket instead, where that leaves the line at least half full
    (:func:`_good_break`)."""
    lines: list[str] = []
    for part in parts:
        line: list[tuple[str, int]] = []
        width = 0
        for token, size in part:
            if token.isspace():
                if line:
                    line, width = [*line, (" ", 1)], width + 1
                continue
            breakable = width and token[0] not in _NO_BREAK_BEFORE
            last = line[-1][0] if line else ""
            if breakable and width + size > units and (last == " " or _wide(token) or _wide(last[-1])):
                cut = _good_break(line, units) if prefer and _wide(token) and _wide(last[-1]) else 0
                if not cut:
                    cut = len(line) - (last in _NO_BREAK_AFTER)  # "（" goes down with what it opens
                lines.append("".join(tok for tok, _ in line[:cut]).rstrip())
                line = line[cut:]
                while line and line[0][0] == " ":
                    line.pop(0)
                width = sum(n for _, n in line)
            line, width = [*line, (token, size)], width + size
        lines.append("".join(tok for tok, _ in line).rstrip())
    return "<br>".join(lines)


def axis(name: str, lang: str) -> str:
    r"""The shared axis title ``axis.<name>`` ("position p", "dimension", "offset k", …)."""
    return t(f"axis.{name}", lang)


def reference_line(
    y: float, label: str, *, dash: str = "dot", left: bool = False, log_axis: bool = False
) -> dict[str, list[dict]]:
    r"""Layout keys for a labelled horizontal reference line at ``y`` (splat into :func:`figure`).

    On a log axis plotly places shapes by value but annotations by log10(value): ``log_axis`` says which.
    """
    x = 0.0 if left else 1.0
    label_y = math.log10(y) if log_axis else y
    return {
        "shapes": [
            {
                "type": "line",
                "xref": "paper",
                "x0": 0,
                "x1": 1,
                "y0": y,
                "y1": y,
                "line": {"color": GREY, "dash": dash, "width": 1},
            },
        ],
        "annotations": [
            {
                "xref": "paper",
                "x": x,
                "xanchor": "left" if left else "right",
                "y": label_y,
                "yanchor": "bottom",
                "text": label,
                "showarrow": False,
                "font": {"color": GREY},
            },
        ],
    }


def line_trace(x: object, y: object, name: str, colour: str, hover: str, *, dash: str = "solid") -> dict:
    r"""One named curve, 2.5 px wide, whose hover shows ``hover`` and the curve's name."""
    return {
        "type": "scatter",
        "x": x,
        "y": y,
        "mode": "lines",
        "name": name,
        "line": {"color": colour, "dash": dash, "width": 2.5},
        "hovertemplate": hover + "<extra>%{fullData.name}</extra>",
    }


def vertical_line(x: float, label: str, *, log_axis: bool = True) -> dict[str, list[dict]]:
    r"""Layout keys for a labelled dotted vertical line at ``x``, its label above the plot (splat into :func:`figure`).

    On a log axis plotly places shapes by value but annotations by log10(value): ``log_axis`` says which.
    """
    shape = {
        "type": "line",
        "xref": "x",
        "x0": x,
        "x1": x,
        "yref": "paper",
        "y0": 0,
        "y1": 1,
        "line": {"color": INK, "dash": "dot", "width": 1.5},
    }
    note = {
        "xref": "x",
        "x": math.log10(x) if log_axis else x,
        "yref": "paper",
        "y": 1.0,
        "yanchor": "bottom",
        "text": label,
        "showarrow": False,
        "font": {"color": INK},
    }
    return {"shapes": [shape], "annotations": [note]}


def title_layout(title: str) -> dict:
    r"""``layout.title`` for an already wrapped ``title``, its top about ``TITLE_PAD`` px below the figure's top edge.

    plotly draws a title of two or three lines, anchored by its top, ~11 px higher than a title of one line (measured
    in Chromium at this size), and the figure's edge cut the first line off. Its anchor moves down by as much."""
    return {"text": title, "pad": {"l": 4, "t": TITLE_PAD + TITLE_LIFT}} if "<br>" in title else {"text": title}


def figure(
    data: list[dict],
    *,
    title: str,
    x: str | None = None,
    y: str | None = None,
    height: int = HEIGHT,
    **layout: object,
) -> go.Figure:
    r"""One figure from trace dicts, with the house template, title, axis titles (already translated) and any
    other ``layout`` keys (``xaxis={...}`` entries are merged with the axis title).

    Built from a single dict on purpose: the object API — ``go.Scatter``, ``add_trace``, ``update_layout``,
    ``make_subplots`` — validates on every call (~10 ms a figure, on every slider move). The result is a
    :class:`~.built.BuiltFigure`: nothing more is paid until a test or an export looks inside it.
    """
    for name, text in (("xaxis", x), ("yaxis", y)):
        if text is not None:
            layout[name] = {"title": {"text": text}, **layout.get(name, {})}  # type: ignore[dict-item]
    wraps = title_wraps(title)
    title = wraps[0][1]
    if len(wraps) > 1:
        layout["meta"] = {**layout.get("meta", {}), "titles": wraps}  # type: ignore[dict-item]
    for trace in data:  # a legend entry never wraps by itself: on a phone a long one ran off the right edge
        if isinstance(trace.get("name"), str) and trace.get("showlegend", True):
            trace["name"] = wrap_title(trace["name"], LEGEND_UNITS)
    extra = TITLE_LINE * title.count("<br>")  # room for the wrapped lines, above whatever the figure asked for
    if extra:
        margin = dict(layout.get("margin", {}))  # type: ignore[call-overload]
        margin["t"] = margin.get("t", TOP_MARGIN) + extra
        layout["margin"] = margin
        height += extra
    full = {"template": TEMPLATE_SPEC, "title": title_layout(title), "height": height, **layout}
    return BuiltFigure({"data": data, "layout": full})


def title_wraps(title: str) -> list[list]:
    r"""``[[units, wrapped], …]``: ``title`` wrapped at each width of :data:`TITLE_WIDTHS` that breaks it differently
    from the narrower one before (the first, :data:`TITLE_UNITS`, is what a phone shows)."""
    return [list(wrap) for wrap in _title_wraps(title)]


@functools.lru_cache(maxsize=4096)
def _title_wraps(title: str) -> tuple[tuple[int, str], ...]:
    wraps: list[tuple[int, str]] = []
    for units in TITLE_WIDTHS:
        wrapped = wrap_title(title, units)
        if not wraps or wrapped != wraps[-1][1]:
            wraps.append((units, wrapped))
        if wrapped.count("<br>") == title.count("<br>"):  # no break of its own: wider ones are the same
            break
    return tuple(wraps)


def title_units(width: float, size: float = TITLE_SIZE) -> float:
    r"""How many title units fit on a line of a figure ``width`` px wide whose title is ``size`` px (the template's
    4 px title padding and 4 px to spare taken off)."""
    return (width - 8) / (UNIT_PX * size / TITLE_SIZE)


def rewrap(layout: dict, width: float) -> dict:
    r"""``layout`` (a figure dict's, from :func:`figure`) with its title wrapped for a figure ``width`` px wide: the
    widest of ``meta.titles`` that fits, the top margin and the height changed by a line per line gained or lost
    (:data:`TITLE_LINE` at the template's title size, in proportion for an enlarged title). The chart component does
    the same in the browser (:mod:`posenc_ui.frame.chart`)."""
    wraps = (layout.get("meta") or {}).get("titles")
    title = layout.get("title") or {}
    if not wraps or not isinstance(title, dict):
        return layout
    size = (title.get("font") or {}).get("size") or TITLE_SIZE
    units = title_units(width, size)
    text = next((w for u, w in reversed(wraps) if u <= units), wraps[0][1])
    change = round(TITLE_LINE * size / TITLE_SIZE) * (text.count("<br>") - str(title.get("text", "")).count("<br>"))
    margin = dict(layout.get("margin") or {})
    margin["t"] = margin.get("t", TOP_MARGIN) + change
    height = (layout.get("height") or HEIGHT) + change
    pad = {"l": 4, "t": TITLE_PAD + TITLE_LIFT * ("<br>" in text)}
    return {**layout, "title": {**title, "text": text, "pad": pad}, "margin": margin, "height": height}


BASE_FONT = 13  # px: the template's font size, which every other size of a figure is relative to


def _scaled(item: dict, key: str, factor: float) -> dict:
    r"""``item`` with the font at ``key`` ``factor`` times as large, if it sets a size."""
    font = item.get(key)
    if isinstance(font, dict) and isinstance(font.get("size"), int | float):
        return {**item, key: {**font, "size": round(font["size"] * factor, 1)}}
    return item


def enlarged(spec: dict, font: int) -> dict:
    r"""A figure dict (``{"data", "layout"}``) with all its text ``font`` / :data:`BASE_FONT` times as large: the
    default font, the title (which the template sets apart), and every size a builder set itself (annotations, tick
    labels, text in cells, colour bars). Presenter mode draws figures so, for a projector."""
    factor = font / BASE_FONT
    layout = dict(spec.get("layout", {}))
    layout["font"] = {**(layout.get("font") or {}), "size": font}
    title = layout.get("title")
    if isinstance(title, dict):
        size = (title.get("font") or {}).get("size") or TITLE_SIZE
        layout["title"] = {**title, "font": {**(title.get("font") or {}), "size": round(size * factor, 1)}}
    if isinstance(layout.get("annotations"), list | tuple):
        layout["annotations"] = [_scaled(a, "font", factor) for a in layout["annotations"]]
    # the top margin holds the title's lines and any label above the plot, all drawn larger: it grows with them (an
    # enlarged title ran into a line's label above the plot); the figure keeps the height it was given (a projector's)
    top = (layout.get("margin") or {}).get("t", TOP_MARGIN)
    layout["margin"] = {**(layout.get("margin") or {}), "t": round(top * factor)}
    for key, value in list(layout.items()):
        if key.startswith(("xaxis", "yaxis")) and isinstance(value, dict):
            layout[key] = _scaled(value, "tickfont", factor)
    data = [_scaled(trace, "textfont", factor) for trace in spec.get("data", [])]
    return {**spec, "data": data, "layout": layout}


#: At most this many traces compete in view at once (a line, its markers and its band count once): past it, a
#: figure draws the ones its text talks about and lists the rest in its legend, to be shown with a click
#: (:func:`focused`).
MAX_TRACES = 8


def focused(traces: list[dict], shown: Collection[str], lang: str) -> dict[str, object]:
    r"""Focus + context: every trace whose ``legendgroup`` is not in ``shown`` is listed in the legend only
    (``visible: "legendonly"``: a click on its name draws it), and the legend says so. Returns the layout keys to
    splat into :func:`figure` (the legend, below the plot, with its title); ``traces`` are changed in place."""
    hidden = False
    for trace in traces:
        if trace.get("legendgroup") not in shown:
            trace["visible"] = "legendonly"
            hidden = True
    legend = legend_below()
    if hidden:
        legend["title"] = {"text": t("figure.pick", lang), "side": "top"}
    return {"legend": legend}


def own_range_key(trace: dict, value_name: str, lang: str) -> dict:
    r"""``trace`` (the first of several heatmaps, each on its own colour range ``zmin``–``zmax``) with the colour bar
    that keys them all: its ends read "low" and "high", and its title says that each panel has its own range."""
    return {
        **trace,
        "showscale": True,
        "colorbar": {  # across the foot of the figure: its words read level, on a phone too
            "orientation": "h",
            "title": {"text": t("figure.own_range", lang, value=value_name), "side": "bottom"},
            "tickmode": "array",
            "tickvals": [trace["zmin"], trace["zmax"]],
            "ticktext": [t("figure.low", lang), t("figure.high", lang)],
            "thickness": 10,
            "len": 0.8,
            "x": 0.5,
            "xanchor": "center",
            "yref": "container",
            "y": 0.0,
            "yanchor": "bottom",
        },
    }


def resized(fig: go.Figure, height: int, font: int | None = None) -> go.Figure:
    r"""A copy of ``fig`` drawn ``height`` px tall, all its text enlarged to a default font of ``font`` px
    (:func:`enlarged`; figures are shared between sessions: never changed in place)."""
    spec = fig.to_dict()  # fresh containers: changing the layout's height leaves the cached figure alone
    spec = {**spec, "layout": {**spec.get("layout", {}), "height": height}}
    return BuiltFigure(spec if font is None else enlarged(spec, font))
