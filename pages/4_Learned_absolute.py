r"""Page 4 — learned absolute positions: a BERT-style table, its hard wall, and why adding to words is fine."""

from posenc_ui.frame import start
from posenc_ui.views.learned import VIEW, probe

with start(VIEW) as page:
    page.text("intro")

    page.heading("h_table")
    page.controls("max_length", "dim")
    page.figure("table")
    page.text("table")

    page.heading("h_wall")
    page.text("wall")
    page.controls("position")
    page.refusal(probe(page.values))
    page.figure("extrapolation")
    page.text("extrapolation")

    page.heading("h_onehot")
    page.text("onehot")
    page.controls("token", "pos", "segment", "width")
    page.figures("onehot", "outputs")

    page.explain()
