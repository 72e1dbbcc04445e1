r"""Export bytes are valid files, and the static-site command writes every page's figures with an index."""

from __future__ import annotations

import re

import plotly.graph_objects as go
import pytest

from posenc_ui import export, plotlyjs
from posenc_ui.figures.style import figure
from posenc_ui.lessons import PAGES, VIEWS


@pytest.fixture(scope="module")
def fig() -> go.Figure:
    return figure([{"type": "scatter", "y": [1, 3, 2], "name": "位置"}], title="位置编码 · position")


def test_html_is_self_contained(fig: go.Figure) -> None:
    page = export.html_bytes(fig).decode()
    assert page.lower().startswith("<!doctype html") or "<html" in page[:200]
    assert "<script src=" not in page and "<script charset" not in page  # nothing to fetch: plotly.js is inlined
    assert plotlyjs.bundle_text(plotlyjs.LEAN_BUNDLE.name) in page
    # Chinese is written as characters, not \uXXXX escapes: plotly's JSON engine is orjson (requirements.txt), set
    # by posenc_ui.figures; the standard library's json would escape every non-ASCII character.
    assert "位置编码" in page and "\\u4f4d" not in page


def test_a_figure_gets_the_cartesian_bundle_unless_a_trace_needs_the_full_one() -> None:
    cartesian = figure([{"type": "heatmap", "z": [[1, 2], [3, 4]]}], title="t")
    polar = figure([{"type": "barpolar", "r": [1, 2], "theta": [0, 90]}], title="t")
    framed = go.Figure(cartesian.data, frames=[go.Frame(data=[go.Barpolar(r=[1], theta=[0])])])
    lean, full = (export.html_bytes(f).decode() for f in (cartesian, polar))
    assert "plotly.js (cartesian - minified) v" in lean and len(lean) < 1_700_000  # 1.5 MB of plotly.js
    assert plotlyjs.bundle_text("plotly.min.js") in full and len(full) > 4_000_000
    assert plotlyjs.bundle_name(framed) == "plotly.min.js"  # a frame's trace type counts as well


def test_the_json_engine_is_orjson_as_declared() -> None:
    import plotly.io as pio

    assert pio.json.config.default_engine == "orjson"
    assert '"位置"' in pio.to_json({"data": [], "layout": {"title": {"text": "位置"}}})


@pytest.mark.slow
def test_png_and_svg_render_through_kaleido(fig: go.Figure) -> None:
    png = export.figure_bytes(fig, "png")
    svg = export.figure_bytes(fig, "svg").decode()
    assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 10_000
    assert svg.lstrip().startswith("<svg") and "位置编码" in svg


def test_bytes_builder_defers_the_work(fig: go.Figure, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(export, "figure_bytes", lambda f, fmt: calls.append(fmt) or b"x")
    build = export.bytes_builder(fig, "png")
    assert calls == []
    assert build() == b"x" and calls == ["png"]


def test_site_without_images_has_every_figure_and_an_index(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    assert export.main(["--out", str(tmp_path), "--lang", "zh", "--no-images"]) == 0
    table = capsys.readouterr().out  # the size table: a row a file and a row a page
    assert "zh/3-sinusoidal-heatmap.html" in table and "zh/3-sinusoidal " in table
    pages = sorted(p.name for p in (tmp_path / "zh").glob("*.html"))
    assert len(pages) == sum(len(view.figures) for view in VIEWS)
    index = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert all(f"zh/{name}" in index for name in pages) and "正弦位置编码" in index
    linked = {
        name: re.findall(r'<script charset="utf-8" src="\.\./([^"]+)"', (tmp_path / "zh" / name).read_text("utf-8"))
        for name in pages
    }
    lean = plotlyjs.LEAN_BUNDLE.name
    assert all(found in ([lean], ["plotly.min.js"]) for found in linked.values()), linked
    assert [name for name, found in linked.items() if found == ["plotly.min.js"]] == ["7-extension-ood.html"]
    for bundle in (lean, "plotly.min.js"):  # both beside index.html, as the links expect
        assert (tmp_path / bundle).read_text(encoding="utf-8") == plotlyjs.bundle_text(bundle)
    swept = (tmp_path / "zh" / "3-sinusoidal-heatmap.html").read_text(encoding="utf-8")
    assert "Plotly.addFrames" in swept and '"sliders"' in swept  # the slider travels with the file


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.id)
def test_home_previews_carry_no_words(page) -> None:
    from posenc_ui.state import defaults

    fig = page.view.figures[page.preview](defaults(page.view.params), "zh")
    bare = export.preview_figure(fig)
    assert not bare.layout.title.text and not bare.layout.annotations and bare.layout.showlegend is False
    assert bare.layout.xaxis.showticklabels is False and bare.layout.yaxis.showticklabels is False
    assert fig.layout.title.text  # the original is left untouched
