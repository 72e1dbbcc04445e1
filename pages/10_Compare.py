r"""Page 10 — compare: every encoding on the same properties, the checkable ones measured live on this page."""

from posenc_ui.frame import start
from posenc_ui.views.compare import VIEW, comparison_table

with start(VIEW) as page:
    page.text("intro")

    page.heading("h_table")
    page.controls("length")
    page.text("table", table=comparison_table(page.values, page.lang))
    page.text("table_read")
    page.text("errata_cost")

    page.heading("h_matrices")
    page.text("matrices")
    page.figure("matrices")

    page.heading("h_extrapolation")
    page.text("extrapolation")
    page.figure("extrapolation")
    page.text("takeaway")

    page.explain()
    page.text("sources")
