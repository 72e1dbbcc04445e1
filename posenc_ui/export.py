r"""Figures out of the app: offline HTML, PNG and SVG, and a whole static site of every page's figures.

In the app, :func:`download_builder` hands ``st.download_button`` a callable, so a file is only built when its
button is clicked. HTML inlines the plotly.js it needs (self-contained, works offline: the 1.5 MB cartesian bundle,
or the full 4.7 MB one for the polar arcs; :mod:`posenc_ui.plotlyjs`) and keeps the figure's main slider as plotly.js
frames computed now (:mod:`posenc_ui.sweep`), so it stays interactive with no server; PNG and SVG are
the figure as shown, through kaleido and Debian's Chromium, with one kaleido server started on first use (~2 s once,
~0.2 s per image after).

As a command, it writes every page's figures at their default settings for a course site with no server::

    python -m posenc_ui.export --out site/ [--lang zh|en] [--no-images]
    python -m posenc_ui.export --previews --out assets/previews   # the home page's card images

``site/index.html`` links each figure's interactive HTML (each with its slider, sharing the bundle it needs beside
``index.html``) and shows its PNG; the command prints every figure's frames and size.
"""

from __future__ import annotations

import argparse
import atexit
import html
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from posenc_core import PosEncError

from .figures.built import BuiltFigure
from .figures.style import EXPORT_BORDER, rewrap
from .lesson import View
from .plotlyjs import FULL_NAME, LEAN_BUNDLE, bundle_name, bundle_text
from .sweep import swept_figure

FORMATS: tuple[str, ...] = ("html", "png", "svg")
MIME = {"html": "text/html", "png": "image/png", "svg": "image/svg+xml"}
IMAGE_WIDTH = 960  # px; the height is the figure's own, with its title wrapped to this width


def at_width(fig: go.Figure, width: int = IMAGE_WIDTH) -> go.Figure:
    r"""A copy of ``fig`` whose title is wrapped for a figure ``width`` px wide (:func:`~.figures.style.rewrap`): the
    builders wrap it for a phone."""
    spec = fig.to_dict()
    return BuiltFigure({**spec, "layout": rewrap(spec.get("layout", {}), width)})


PNG_SCALE = 2  # crisp on high-density screens and slides

_kaleido_lock = threading.Lock()
_kaleido_started = False


def html_bytes(fig: go.Figure, *, bundles: str | None = None) -> bytes:
    r"""A complete HTML page of ``fig`` with the plotly.js bundle it needs (:func:`~posenc_ui.plotlyjs.bundle_name`):
    inlined, or, with ``bundles`` (a folder URL such as ``"../"``), linked from that folder."""
    fig = at_width(fig)
    name = bundle_name(fig)
    # auto_play=False: a figure with frames would otherwise play through them all on load and stop on the last one.
    src = (bundles or "") + name
    page = fig.to_html(include_plotlyjs=src, full_html=True, auto_play=False, config={"displaylogo": False})
    if bundles is None:  # plotly writes a <script src>; inline the bundle there, as include_plotlyjs=True would
        tag = f'<script charset="utf-8" src="{src}"></script>'
        if page.count(tag) != 1:
            raise RuntimeError(f"plotly's HTML no longer links plotly.js as {tag!r}: re-check posenc_ui.export")
        page = page.replace(tag, f"<script>{bundle_text(name)}</script>")
    return page.encode("utf-8")


def stop_kaleido() -> None:
    r"""Stop the kaleido server if this process started one (before interpreter exit tears down its temp dir)."""
    global _kaleido_started
    with _kaleido_lock:
        if _kaleido_started:
            import kaleido

            kaleido.stop_sync_server(silence_warnings=True)
            _kaleido_started = False


def _ensure_kaleido() -> None:
    r"""Start the kaleido sync server once per process (it keeps one Chromium alive for all later images)."""
    global _kaleido_started
    if _kaleido_started:
        return
    import kaleido

    kaleido.start_sync_server(silence_warnings=True)
    atexit.register(stop_kaleido)
    _kaleido_started = True


def image_bytes(fig: go.Figure, fmt: str) -> bytes:
    r"""``fig`` rendered as ``"png"`` or ``"svg"`` by kaleido (CJK text needs fonts-noto-cjk installed)."""
    if fmt not in ("png", "svg"):
        raise ValueError(f"fmt must be 'png' or 'svg', got {fmt!r}")
    import kaleido

    spec = at_width(fig).to_dict()
    height = spec["layout"].get("height") or 420
    opts = {"format": fmt, "width": IMAGE_WIDTH, "height": height, "scale": PNG_SCALE if fmt == "png" else 1}
    with _kaleido_lock:  # one Chromium tab at a time; sessions may click at once
        _ensure_kaleido()
        return kaleido.calc_fig_sync(spec, opts=opts)


def figure_bytes(fig: go.Figure, fmt: str) -> bytes:
    r"""``fig`` as the bytes of a ``"html"``, ``"png"`` or ``"svg"`` file."""
    return html_bytes(fig) if fmt == "html" else image_bytes(fig, fmt)


def bytes_builder(fig: go.Figure, fmt: str) -> Callable[[], bytes]:
    r"""A callable for ``st.download_button(data=...)``: the file is built only when the button is clicked."""
    return lambda: figure_bytes(fig, fmt)


def download_builder(
    view: View, name: str, values: Mapping[str, Any], lang: str, shown: go.Figure, fmt: str
) -> Callable[[], bytes]:
    r"""The download panel's callable: HTML with the figure's slider as frames, PNG / SVG of ``shown`` as drawn.

    A page showing its last good figure (the core refused the current values) gets that figure, still.
    """
    if fmt != "html":
        return bytes_builder(shown, fmt)

    def build() -> bytes:
        try:
            return html_bytes(swept_figure(view, name, values, lang))
        except PosEncError:
            return html_bytes(shown)

    return build


# --- the static site ---------------------------------------------------------------------------------------------


def write_site(
    out: Path, langs: Sequence[str], *, images: bool = True, sizes: list[SiteFigure] | None = None
) -> list[Path]:
    r"""Write every page's default figures under ``out/<lang>/`` and an ``out/index.html``; return the files.

    Each HTML keeps its figure's slider (:func:`~posenc_ui.sweep.swept_figure`); ``sizes`` collects one
    :class:`SiteFigure` a file.
    """
    from .catalog import PAGES
    from .i18n import t
    from .state import defaults

    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name in (LEAN_BUNDLE.name, FULL_NAME):  # each figure links the one it needs (posenc_ui.plotlyjs)
        written.append(out / name)
        written[-1].write_text(bundle_text(name), encoding="utf-8")
    sections: list[str] = []
    for lang in langs:
        folder = out / lang
        folder.mkdir(exist_ok=True)
        sections.append(f"<h2>{html.escape(t('export.site_lang', lang))}</h2>")
        for page in PAGES:
            values = defaults(page.view.params, lang)
            items: list[str] = []
            for name, build in page.view.figures.items():
                fig = build(values, lang)
                stem = folder / f"{page.number}-{page.id}-{name}"
                swept = swept_figure(page.view, name, values, lang)
                stem.with_suffix(".html").write_bytes(html_bytes(swept, bundles="../"))
                written.append(stem.with_suffix(".html"))
                if sizes is not None:
                    where = f"{lang}/{page.number}-{page.id}"
                    sizes.append(
                        SiteFigure(stem.with_suffix(".html"), where, len(swept.frames), page.view.sweeps.get(name))
                    )
                items.append(_site_item(fig, stem, out, images, written))
            sections.append(
                f"<h3>{page.number}. {html.escape(t(page.title_key, lang))}</h3>"
                f"<p>{html.escape(t(page.promise_key, lang))}</p><div class='grid'>{''.join(items)}</div>"
            )
    index = out / "index.html"
    index.write_text(_site_page(sections), encoding="utf-8")
    written.append(index)
    return written


@dataclass(frozen=True)
class SiteFigure:
    r"""One figure's HTML file in the site: where, its slider's frames (0 when still) and the parameter swept."""

    path: Path
    page: str
    frames: int
    swept: str | None

    @property
    def bytes(self) -> int:
        return self.path.stat().st_size


def size_table(figures: Sequence[SiteFigure]) -> str:
    r"""A plain-text table: each figure file's slider and size (beyond the shared plotly.js), then per page."""
    lines = [f"{'file':44} {'slider':13} {'frames':>6} {'KB':>7}"]
    pages: dict[str, list[SiteFigure]] = {}
    for fig in figures:
        lines.append(
            f"{fig.path.parent.name + '/' + fig.path.name:44} {fig.swept or '-':13} {fig.frames:6d} "
            f"{fig.bytes / 1024:7.0f}"
        )
        pages.setdefault(fig.page, []).append(fig)
    lines.append(f"{'page':44} {'figures':>13} {'frames':>6} {'KB':>7}")
    for page, figs in pages.items():
        total = sum(f.bytes for f in figs) / 1024
        lines.append(f"{page:44} {len(figs):13d} {sum(f.frames for f in figs):6d} {total:7.0f}")
    return "\n".join(lines)


def _site_item(fig: go.Figure, stem: Path, out: Path, images: bool, written: list[Path]) -> str:
    r"""One figure's entry in the index: its PNG (if rendered) linking to the interactive HTML."""
    href = stem.with_suffix(".html").relative_to(out).as_posix()
    title = html.escape(re.sub(r"<[^>]+>", "", fig.layout.title.text or stem.name))  # plotly's <sub>, <sup>
    if not images:
        return f"<a href='{href}'>{title}</a>"
    for fmt in ("png", "svg"):
        stem.with_suffix(f".{fmt}").write_bytes(image_bytes(fig, fmt))
        written.append(stem.with_suffix(f".{fmt}"))
    png = stem.with_suffix(".png").relative_to(out).as_posix()
    svg = stem.with_suffix(".svg").relative_to(out).as_posix()
    return (
        f"<figure><a href='{href}'><img src='{png}' alt='{title}'></a>"
        f"<figcaption><a href='{href}'>{title}</a> · <a href='{svg}'>SVG</a></figcaption></figure>"
    )


PREVIEW_SIZE = (480, 240)


def preview_figure(fig: go.Figure) -> go.Figure:
    r"""``fig`` stripped of every word (title, axis titles, tick labels, legend, annotations) for a card."""
    bare = go.Figure(fig)
    bare.update_layout(title=None, showlegend=False, margin={"l": 4, "r": 4, "t": 4, "b": 4})
    bare.layout.annotations = ()  # update_layout(annotations=[]) would leave them in place
    bare.update_xaxes(title=None, showticklabels=False)
    bare.update_yaxes(title=None, showticklabels=False)
    for trace in bare.data:  # colour bars carry a title and numbers
        if "showscale" in trace:
            trace.showscale = False
    bare.update_coloraxes(showscale=False)  # a colour bar shared by subplots lives in the layout
    bare.update_traces(showscale=False, selector={"type": "heatmap"})
    bare.update_traces(text=None, texttemplate=None)
    return bare


def write_previews(folder: Path) -> list[Path]:
    r"""The home page's card images, ``folder/<page id>.png``, from each page's figure at its defaults."""
    from .catalog import PAGES
    from .state import defaults

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for page in PAGES:
        view = page.view
        fig = preview_figure(view.figures[page.preview](defaults(view.params), "en"))
        width, height = PREVIEW_SIZE
        with _kaleido_lock:
            _ensure_kaleido()
            png = kaleido_png(fig, width, height)
        path = folder / page.preview_file.name
        path.write_bytes(png)
        written.append(path)
    return written


def kaleido_png(fig: go.Figure, width: int, height: int) -> bytes:
    r"""A PNG of ``fig`` at exactly ``width`` × ``height`` CSS pixels, scale 1 (the kaleido server must run)."""
    import kaleido

    return kaleido.calc_fig_sync(fig.to_dict(), opts={"format": "png", "width": width, "height": height, "scale": 1})


def _site_page(sections: Sequence[str]) -> str:
    style = (
        "body{font-family:'Noto Sans CJK SC','Noto Sans',sans-serif;max-width:1100px;margin:2em auto;padding:0 1em}"
        ".grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(320px,1fr));gap:1em}"
        f"img{{width:100%;border:1px solid {EXPORT_BORDER}}}figure{{margin:0}}"
    )
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width,initial-scale=1'>"
        f"<title>posenc</title><style>{style}</style></head><body><h1>posenc</h1>{''.join(sections)}</body></html>"
    )


def main(argv: Sequence[str] | None = None) -> int:
    r"""``python -m posenc_ui.export --out DIR [--lang zh|en] [--no-images]``."""
    from .i18n import LANGS

    parser = argparse.ArgumentParser(prog="python -m posenc_ui.export", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder to write (created if missing)")
    parser.add_argument("--lang", choices=LANGS, help="one language (default: both)")
    parser.add_argument("--no-images", action="store_true", help="skip PNG/SVG (no Chromium needed)")
    parser.add_argument("--previews", action="store_true", help="write only the home page's card images to --out")
    args = parser.parse_args(argv)
    try:
        if args.previews:
            files = write_previews(args.out)
        else:
            sizes: list[SiteFigure] = []
            langs = [args.lang] if args.lang else list(LANGS)
            files = write_site(args.out, langs, images=not args.no_images, sizes=sizes)
            print(size_table(sizes))
    finally:
        stop_kaleido()
    where = "" if args.previews else f" (open {args.out / 'index.html'})"
    print(f"wrote {len(files)} files to {args.out}{where}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
