r"""Page 5 — relative positions: Shaw's clipped offsets, the bias R_{j−i}, T5's buckets, and why relative at all."""

from posenc_ui.frame import start
from posenc_ui.lessons.relative.view import VIEW

with start(VIEW) as page:
    page.text("intro")

    @page.section()  # the lesson: a slider that all of it reads reruns it, not the frame around it
    def lesson() -> None:
        page.heading("h_shaw")
        page.controls("key_length", "query_length", "max_relative")
        page.figure("shaw_index")
        page.text("shaw", "shaw_read", "shaw_derive")
        page.check("shaw")

        page.heading("h_bias")
        page.text("bias")
        page.figures("bias_table", "bias_matrix")
        page.check("toeplitz")
        page.text("not_absolute", "bias_errata")  # under its check: above the first figure it pushed it off a phone

        @page.section("h_t5")
        def t5() -> None:
            page.text("t5")
            page.controls("num_buckets", "max_distance")
            page.figure("t5_buckets")
            page.text("t5_read")

            @page.section()  # the matrix's own two choices redraw the matrix alone, not the buckets above
            def t5_matrix() -> None:
                page.controls("direction", "t5_length")
                page.figure("t5_matrix")
                page.check("t5")

        @page.section("h_why")
        def why() -> None:
            page.text("why")
            page.controls("projection")
            page.controls("cross_length", "d_model", "seed")
            page.figures("cross", "spread")
            page.check("cross")
            page.text("takeaway")

    page.explain()
    page.text("sources")
