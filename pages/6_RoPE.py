r"""Page 6 — RoPE: clock hands, scores that see only n − m, two pairings, long-range decay, periods."""

from posenc_ui.frame import start
from posenc_ui.views.rope import VIEW

with start(VIEW) as page:
    page.text("intro")
    page.controls("dim", "base")

    page.heading("h_clocks")
    page.controls("pairs")
    page.figure("clocks")
    page.controls("m", "n", "seed")  # under the clocks: on a phone they would push the first figure off the screen
    page.text("clocks")
    page.text("complex")

    page.heading("h_derive")
    page.text("derive")
    for step in ("complex", "orthogonal", "determinant", "norm", "composition"):
        page.check(step)
    page.text("errata_row")
    page.check("row_vector")

    page.heading("h_relative")
    page.text("relative")
    page.figures("window", "offsets")
    page.check("relative")

    page.heading("h_pairing")
    page.text("pairing")
    page.figure("pairs")
    page.check("permutation")
    page.text("mismatch")
    page.controls("trained", "lookback")
    page.figures("mismatch", "mixed")
    page.check("wrong")
    page.check("mixed")

    page.heading("h_decay")
    page.text("decay")
    page.figure("decay")
    page.check("published")
    page.text("random")
    page.controls("same_vector")
    page.figure("random")
    page.check("no_decay")

    page.heading("h_periods")
    page.text("periods")
    page.figure("periods")
    page.check("period")
    page.text("errata")
    page.text("repeats")
    page.controls("tolerance")
    page.figures("toy", "repeats")
    page.check("toy")

    page.heading("h_beyond")
    page.text("axial")
    page.controls("grid")
    page.figure("axial")
    page.check("axial")
    page.text("linear")
    page.check("linear")
    page.text("trained")

    page.explain()
    page.text("sources")
