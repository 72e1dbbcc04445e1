r"""Page 13 — compare: every encoding on the same properties, the checkable ones measured live on this page."""

from posenc_ui.frame import start
from posenc_ui.lessons.compare.view import VIEW, comparison_table

with start(VIEW) as page:
    page.text("intro")

    @page.section()  # one slider feeds everything: a move still skips the frame and the panels around it
    def compare() -> None:
        page.heading("h_table")
        page.controls("length")
        page.text("table", table=page.ask(comparison_table, page.lang))
        page.text("table_read")
        page.text("not_compared")
        page.checks("relative", "absolute", "linear", "rank")
        page.text("errata_cost")

        page.heading("h_matrices")
        page.text("matrices")
        page.figure("matrices")

        page.heading("h_extrapolation")
        page.text("extrapolation")
        page.figure("extrapolation")
        page.checks("task_dependence", "alibi_local", "retrieval", "relative_not_enough")
        page.text("takeaway")

    page.explain()
    page.text("sources")
