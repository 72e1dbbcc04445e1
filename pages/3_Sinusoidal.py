r"""Page 3 — sinusoidal position encoding: the table, its waves, dot products, the shift matrix M_k."""

from posenc_ui.frame import start
from posenc_ui.lessons.sinusoidal.view import VIEW

with start(VIEW) as page:

    @page.section()  # the lesson: a slider that all of it reads reruns it, not the frame around it
    def lesson() -> None:
        page.heading("h_table")
        page.figure("heatmap")  # first: a phone's first screen shows it; the words that set it up follow
        page.controls("length", "dim", "base")
        page.text("intro")
        page.text("table")
        page.check("stripes")

        @page.section("h_waves")
        def waves() -> None:
            page.text("waves")
            page.controls("dims")
            page.figure("waves")

        page.heading("h_similarity")
        page.text("similarity")
        page.figure("similarity")

        @page.section("h_shift")
        def shift() -> None:
            page.text("shift")
            page.controls("offset")
            page.figure("shift")
            page.check("shift")
            page.text("errata_shift")
            page.check("errata_shift")
            page.text("faq_sin_cos")  # here, not in the FAQ below: its check reads the offset k
            page.check("sin_and_cos")

        page.heading("h_exponent")
        page.text("exponent")
        page.figure("exponent")
        page.check("exponent")

        page.heading("h_layouts")
        page.text("layouts")
        page.figures("interleaved", "concat")

        page.heading("h_faq")
        page.text("faq_sum")
        page.check("sum")
        page.text("faq_depth")
        page.figure("depth")
        page.check("depth")
        page.text("errata_expressive")

    page.explain()
    page.text("sources")
