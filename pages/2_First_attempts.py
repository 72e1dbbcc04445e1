r"""Page 2 — first attempts: the integer index, [0, 1] normalisation, binary bits; each fails, measurably."""

from posenc_ui.frame import start
from posenc_ui.lessons.first.view import VIEW

with start(VIEW) as page:
    page.text("intro")

    @page.section()  # the lesson: a slider that all of it reads reruns it, not the frame around it
    def lesson() -> None:
        page.heading("h_integer")
        page.controls("length")
        page.figure("integer")
        page.text("integer")
        page.check("step")

        page.heading("h_normalized")
        page.text("normalized")
        page.figure("normalized")
        page.text("errata")

        @page.section("h_binary")
        def binary() -> None:
            page.text("binary")
            page.controls("bits", "wrap")
            page.figure("binary")
            page.text("jumps")
            page.figure("jumps")
            page.check("jumps")
            page.text("takeaway")

    page.explain()
    page.text("sources")
