r"""Page 9 — position in today's models: per-layer designs, NoPE, p-RoPE, multimodal RoPE, MLA's decoupled key."""

from posenc_ui.frame import start
from posenc_ui.lessons.today.media import axis_words, cache_words, grid_words
from posenc_ui.lessons.today.view import VIEW, prope_words, reach_words

with start(VIEW) as page:
    page.text("intro")

    @page.section("h_layers")
    def layers() -> None:
        page.controls("model")
        page.figure("layers")
        page.text("layers")
        page.figure("reach")
        page.text("reach", **page.ask(reach_words, page.lang))
        page.check("reach")

    @page.section("h_nope")
    def nope() -> None:
        page.text("nope")
        page.figure("probe")
        page.controls("length", "dim", "seed")
        page.checks("probe", "no_mask")
        page.text("nope_norm")
        page.figure("norm")
        page.check("norm")
        page.text("nope_caveat")

    @page.section("h_prope")
    def prope() -> None:
        page.text("prope_intro")
        page.figure("prope")
        page.controls("proportion")
        page.text("prope", **page.ask(prope_words, page.lang))
        page.check("prope")

    @page.section("h_mrope")
    def mrope() -> None:
        page.text("mrope")

        @page.section()  # a moved grid size redraws the ids alone, not the three figures below that ignore it
        def ids() -> None:
            page.figure("ids")
            page.controls("image_rows", "image_cols", "frames")

        page.text("mrope_axes")
        page.figure("axes")
        page.text("videorope", **page.ask(axis_words, page.lang))

        @page.section()  # the layout feeds the scores and the grid below; a moved Δt or extent, the grid alone
        def layouts() -> None:
            page.figure("scores")
            page.controls("layout", "span")
            page.check("text")
            page.text("grid", **page.ask(grid_words, page.lang))

            @page.section()
            def grid() -> None:
                page.figure("grid")
                page.controls("dt", "extent")

    @page.section("h_mla")
    def mla() -> None:
        page.text("mla", **page.ask(cache_words, page.lang))
        page.figure("fold")
        page.controls("mla_length", "mla_seed")
        page.checks("plain", "rotated", "decoupled")
        page.text("mla_cache", **page.ask(cache_words, page.lang))
        page.figure("cache")
        page.check("cache")
        page.text("takeaway")

    page.explain()
    page.text("sources")
