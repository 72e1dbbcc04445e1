r"""Page 4 — learned absolute positions: a BERT-style table, its hard wall, a table the lab trained, and why adding
to words is fine."""

from posenc_ui.frame import start
from posenc_ui.lessons.learned.view import VIEW, probe, trained_facts

with start(VIEW) as page:
    page.text("intro")

    @page.section()  # the lesson: a slider that all of it reads reruns it, not the frame around it
    def lesson() -> None:
        page.heading("h_table")
        page.controls("max_length", "dim")
        page.figure("table")
        page.text("table")

        @page.section("h_wall")
        def wall() -> None:
            page.text("wall")
            page.controls("position")
            page.refusal(page.ask(probe))
            page.figure("extrapolation")
            page.check("wall")
            page.text("extrapolation")

    @page.section("h_trained")
    def trained() -> None:
        facts = page.ask(trained_facts)  # the chosen lab model's shape, training length and first untouched row
        page.text("trained", **facts)
        page.controls("model")
        page.figure("trained_table")
        page.text("trained_table")
        page.figure("trained_rows")
        page.check("neighbours")
        page.text("trained_rows", **facts)
        page.text("untouched", **facts)
        page.figure("untouched")
        page.check("untouched")

    @page.section("h_onehot")
    def onehot() -> None:
        page.text("onehot")
        page.controls("token", "pos", "segment", "width")
        page.figures("onehot", "outputs")
        page.check("onehot")

    page.explain()
    page.text("sources")
