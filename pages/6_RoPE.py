r"""Page 6 — RoPE: clock hands, scores that see only n − m, two pairings, long-range decay, periods."""

from posenc_ui.frame import start
from posenc_ui.lessons.rope.view import VIEW

with start(VIEW) as page:

    def near() -> None:  # where two tokens sit: the clocks and what rests on them, then the pairing mismatch
        @page.section()  # m and n feed all four parts: clocks, derivation, relative scores, pairing
        def clocks() -> None:
            page.heading("h_clocks")
            page.figure("clocks")
            # Under the clocks: on a phone, above them, they pushed the first figure off the first screen.
            page.controls("pairs", "m", "n")
            page.text("intro")  # under the first figure: above it, it pushed the figure off a phone's first screen
            page.text("clocks")
            page.check("turn")
            page.text("complex")

            page.heading("h_derive")
            page.text("derive")
            page.checks("complex", "orthogonal", "determinant", "norm", "composition")
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

        @page.section()  # a section of its own: a moved m or n does not redraw it, nor a moved look-back the clocks
        def mismatch() -> None:
            page.text("mismatch")
            page.controls("trained", "lookback")
            page.figures("mismatch", "mixed")
            page.checks("wrong", "mixed")

    def far() -> None:  # far away: long-range decay, periods and near repeats; then beyond one dimension
        @page.section("h_decay")
        def decay() -> None:
            page.text("decay")
            page.figure("decay")
            page.check("published")
            page.text("random")
            page.controls("same_vector")
            page.figure("random")
            page.check("no_decay")

        @page.section("h_periods")
        def periods() -> None:
            page.text("periods")
            page.figure("periods")
            page.check("period")
            page.text("errata", "repeats")
            page.controls("tolerance")
            page.figures("toy", "repeats")
            page.check("toy")

        @page.section("h_beyond")
        def beyond() -> None:
            page.text("axial")
            page.controls("grid")
            page.figure("axial")
            page.check("axial")
            page.text("linear")
            page.check("linear")
            page.text("trained_models")

    @page.section()  # the lesson: a slider that all of it reads reruns it, not the frame around it
    def lesson() -> None:
        page.controls("dim", "base", "seed")  # seed: the random q and k of every section below
        near()
        far()

    page.explain()
    page.text("sources")
