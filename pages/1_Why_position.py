r"""Page 1 — why position? Attention alone cannot tell "公司收购了竞争对手" from "竞争对手收购了公司"."""

from posenc_ui.frame import start
from posenc_ui.lessons.why.view import VIEW

with start(VIEW) as page:
    page.text("intro")

    @page.section()  # every figure reads every widget: a move still skips the frame and the panels around it
    def attention() -> None:
        page.heading("h_attention")
        page.controls("pair", "encoding")
        page.figures("attention_a", "attention_b")
        page.text("attention", "attention_read", "order")

        page.heading("h_residuals")
        page.text("residuals")
        page.controls("dim", "seed")
        page.figure("residuals")
        page.checks("none", "selected")
        page.text("takeaway")

    page.heading("h_scaling")  # reads no widget
    page.text("scaling")
    page.figure("scaling")
    page.check("scaling")

    page.explain()
    page.text("sources")
