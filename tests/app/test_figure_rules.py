r"""The rules every figure of every page keeps (docs: /work/shared/STYLE.md, "Figures a student can follow"), checked
on each view's figures at their defaults, in both languages, from the registries (:data:`posenc_ui.lessons.VIEWS`): a
page added later is checked without a line here.

- a heatmap says what its colours mean: a colour bar (its own or its colour axis's), numbers in its cells, a legend
  of colour swatches, or the one colour bar that keys panels drawn each on its own range ("low" … "high");
- one colour means one thing within a figure: heatmaps with the same colour scale share a colour axis, or the same
  range, or say that each panel has its own;
- every axis that shows tick labels has a title, or shares its position with one that has (small multiples name
  their axes once: keys under the bottom panel of a column, queries beside the left panel of a row);
- no more than :data:`~posenc_ui.figures.style.MAX_TRACES` traces compete in view in one plot (a band or a marker
  that belongs to a line counts once with it; the rest are listed in the legend, drawn on a click).
"""

from __future__ import annotations

import json
from collections import defaultdict
from functools import cache

import pytest

from posenc_core import PosEncError
from posenc_ui.figures.built import figure_json
from posenc_ui.figures.style import MAX_TRACES, focused, own_range_key
from posenc_ui.i18n import t
from posenc_ui.lesson import PageRefusal
from posenc_ui.lessons import VIEWS
from posenc_ui.state import defaults

CARTESIAN = {"scatter", "scattergl", "bar", "heatmap", "histogram", "box", "contour"}
HEATMAPS = {"heatmap", "contour"}
WIDE = "@wide"  # a figure's layout for a wide, short canvas (presenter mode, a single-figure embed)
FIGURES = [(view, name) for view in VIEWS for name in view.figures] + [
    (view, name + WIDE) for view in VIEWS for name in view.wide
]


@cache
def spec(page_id: str, name: str, lang: str) -> dict:
    r"""The figure dict a page sends for figure ``name`` (``<name>@wide``: its wide layout) at its defaults."""
    view = next(v for v in VIEWS if v.page_id == page_id)
    recipe = view.wide[name.removesuffix(WIDE)] if name.endswith(WIDE) else view.figures[name]
    return json.loads(figure_json(recipe(defaults(view.params), lang)))


def _ids(item) -> str:
    view, name = item
    return f"{view.page_id}.{name}"


def _own_range(trace: dict, lang: str) -> bool:
    ticks = (trace.get("colorbar") or {}).get("ticktext")
    return trace.get("showscale") is not False and ticks == [t("figure.low", lang), t("figure.high", lang)]


def _keyed(trace: dict, layout: dict) -> bool:
    if trace.get("texttemplate") or trace.get("text") is not None:
        return True
    if trace.get("coloraxis"):
        return (layout.get(trace["coloraxis"]) or {}).get("showscale", True) is not False
    return trace.get("showscale", True) is not False


def _swatches(data: list[dict]) -> bool:
    r"""A legend of colour squares (traces with no points of their own) that names what each colour means."""
    keys = [tr for tr in data if tr.get("type", "scatter") == "scatter" and all(v is None for v in tr.get("x", [0]))]
    return bool(keys) and all((tr.get("marker") or {}).get("symbol") == "square" for tr in keys)


def _scale(trace: dict) -> str:
    return json.dumps(trace.get("colorscale"), sort_keys=True)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("item", FIGURES, ids=_ids)
def test_every_heatmap_says_what_its_colours_mean(item, lang: str) -> None:
    view, name = item
    figure = spec(view.page_id, name, lang)
    data, layout = figure["data"], figure["layout"]
    heatmaps = [tr for tr in data if tr.get("type") in HEATMAPS]
    by_scale = defaultdict(list)
    for trace in heatmaps:
        by_scale[_scale(trace)].append(trace)
    for traces in by_scale.values():
        own = any(_own_range(tr, lang) for tr in traces)
        for trace in traces:
            assert own or _keyed(trace, layout) or _swatches(data), f"{view.page_id}.{name}: a heatmap with no key"
        ranges = {
            (tr.get("coloraxis"),) if tr.get("coloraxis") else (tr.get("zmin"), tr.get("zmax"))
            for tr in traces
            if not tr.get("texttemplate")
        }
        each_own_bar = all(not tr.get("coloraxis") and tr.get("showscale", True) is not False for tr in traces)
        assert own or each_own_bar or len(ranges) <= 1, f"{view.page_id}.{name}: one colour, several meanings"


def _axes_in_use(data: list[dict]) -> set[str]:
    used = set()
    for trace in data:
        if trace.get("type", "scatter") in CARTESIAN:
            used.add("xaxis" + trace.get("xaxis", "x")[1:])
            used.add("yaxis" + trace.get("yaxis", "y")[1:])
    return used


def _title(axis: dict) -> str:
    title = axis.get("title")
    return (title.get("text") if isinstance(title, dict) else title) or ""


def _shows_ticks(axis: dict) -> bool:
    return axis.get("visible") is not False and axis.get("showticklabels") is not False


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("item", FIGURES, ids=_ids)
def test_every_axis_with_tick_labels_has_a_title(item, lang: str) -> None:
    view, name = item
    figure = spec(view.page_id, name, lang)
    layout = figure["layout"]
    used = sorted(_axes_in_use(figure["data"]))
    untitled = []
    for key in used:
        axis = layout.get(key) or {}
        if not _shows_ticks(axis) or _title(axis):
            continue
        domain = axis.get("domain", [0, 1])
        named_beside = any(
            other[0] == key[0]
            and _title(layout.get(other) or {})
            and (layout.get(other) or {}).get("domain", [0, 1]) == domain
            for other in used
            if other != key
        )
        if not named_beside:
            untitled.append(key)
    assert not untitled, f"{view.page_id}.{name}: {untitled} show tick labels but no title"


def _competing(data: list[dict]) -> dict[tuple[str, str], set[str]]:
    r"""Per plot (x axis, y axis), the traces drawn there, a line's band and markers counted with it (one legend
    group, or one name, is one trace)."""
    plots: dict[tuple[str, str], set[str]] = defaultdict(set)
    for n, trace in enumerate(data):
        drawn = trace.get("visible", True) is True
        if trace.get("type", "scatter") not in {"scatter", "scattergl", "bar"} or not drawn:
            continue
        if all(v is None for v in trace.get("x", [0]) or [0]):
            continue  # a legend swatch: nothing drawn
        who = trace.get("legendgroup") or trace.get("name") or f"#{n}"
        plots[(trace.get("xaxis", "x"), trace.get("yaxis", "y"))].add(str(who))
    return plots


@pytest.mark.parametrize("item", FIGURES, ids=_ids)
def test_no_more_than_eight_traces_compete_in_one_plot(item) -> None:
    view, name = item
    figure = spec(view.page_id, name, "en")
    crowded = {plot: len(who) for plot, who in _competing(figure["data"]).items() if len(who) > MAX_TRACES}
    assert not crowded, f"{view.page_id}.{name}: {crowded} traces in view"


def test_the_rules_fail_on_figures_that_break_them() -> None:
    r"""Each check above, on a figure made to break it (a check that cannot fail proves nothing)."""
    bare = {"type": "heatmap", "z": [[0, 1]], "showscale": False}
    assert not _keyed(bare, {}) and not _swatches([bare])
    assert _keyed({**bare, "texttemplate": "%{z}"}, {}) and _keyed({"type": "heatmap", "z": [[0]]}, {})
    assert _own_range(own_range_key({**bare, "zmin": 0, "zmax": 1}, "bias", "en"), "en")
    assert not _own_range({**bare, "showscale": True}, "en")
    lines = [{"type": "scatter", "x": [0, 1], "y": [0, 1], "name": f"line {k}"} for k in range(MAX_TRACES + 1)]
    assert max(len(who) for who in _competing(lines).values()) == MAX_TRACES + 1
    for line in lines:
        line["legendgroup"] = line["name"]
    focused(lines, {f"line {k}" for k in range(MAX_TRACES)}, "en")
    assert max(len(who) for who in _competing(lines).values()) == MAX_TRACES
    assert _shows_ticks({}) and not _title({}) and not _shows_ticks({"showticklabels": False})


def test_every_page_with_figures_is_checked() -> None:
    r"""The list above comes from the registry: every view's every figure, none left out."""
    assert len(FIGURES) == sum(len(view.figures) + len(view.wide) for view in VIEWS)
    assert {v.page_id for v, _ in FIGURES} == {v.page_id for v in VIEWS if v.figures}


def _figure_title(figure: dict) -> str:
    title = figure["layout"].get("title") or {}
    return (title.get("text") if isinstance(title, dict) else title) or ""


def _at_shared_values(view, other) -> dict | None:
    r"""``view``'s defaults with each widget it shares by name with ``other`` set to ``other``'s default where
    ``view`` offers that value, and each other widget kept to what those allow (``clamp``, in the page's order of
    widgets, as the page does); None when no shared widget's value changes."""
    values, theirs = defaults(view.params), defaults(other.params)
    changed = False
    for param in view.params:
        wanted = theirs.get(param.name, values[param.name])
        if wanted != values[param.name] and param.clamp(wanted, values) == wanted:
            values[param.name], changed = wanted, True
        else:
            values[param.name] = param.clamp(values[param.name], values)
    return values if changed else None


def test_no_page_repeats_a_figure_another_page_draws() -> None:
    # a figure drawn twice makes a page longer and teaches nothing more: page 7 drew page 9's strip of the preset
    # picked (at page 9's model, its title was page 9's: "Llama 4 Scout: 48 layers, 36 with RoPE"). Each figure is
    # drawn at its page's defaults and again at another page's values of the widgets the two share; figures are told
    # apart by their titles
    drawn = defaultdict(set)
    for view, name in FIGURES:
        if not name.endswith(WIDE):
            drawn[_figure_title(spec(view.page_id, name, "en"))].add((view.page_id, name))
    for view in VIEWS:
        for other in VIEWS:
            values = _at_shared_values(view, other) if other is not view else None
            if values is not None:
                for name, recipe in view.figures.items():
                    try:
                        drawn[_figure_title(json.loads(figure_json(recipe(values, "en"))))].add((view.page_id, name))
                    except (PageRefusal, PosEncError):  # a refusal at those values draws nothing to compare
                        continue
    repeated = {title: sorted(where) for title, where in drawn.items() if title and len({p for p, _ in where}) > 1}
    assert not repeated
