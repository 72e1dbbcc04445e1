r"""Page 8 — ALiBi: a linear distance penalty per head, its slopes, its reach, and the two ways to write it."""

from posenc_ui.frame import start
from posenc_ui.lessons.alibi.view import VIEW

with start(VIEW) as page:
    page.text("intro")

    @page.section()  # the lesson: a slider that all of it reads reruns it, not the frame around it
    def lesson() -> None:
        page.heading("h_slopes")
        page.controls("n_heads")
        page.figure("slopes")
        page.text("slopes")
        page.check("slopes")
        page.text("slopes_rule")

        page.heading("h_bias")
        page.text("bias")
        page.controls("heads", "length", "causal")
        page.figure("bias")

        @page.section()  # the seed feeds the weights and the last check
        def weights() -> None:
            page.heading("h_weights")
            page.text("weights")
            page.controls("seed")
            page.figure("weights")
            page.text("weights_read")

            page.heading("h_field")
            page.text("field")
            page.controls("threshold")
            page.figures("curves", "field")
            page.text("field_caveat")

            page.heading("h_forms")
            page.text("forms")
            page.figure("forms")
            page.check("forms")
            page.text("takeaway")

    page.explain()
    page.text("sources")
