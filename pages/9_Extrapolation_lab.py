r"""Page 9 — the extrapolation lab: train tiny Transformers per position encoding, test them past L_train."""

from posenc_ui import lab_runner
from posenc_ui.frame import start
from posenc_ui.views.lab import VIEW

with start(VIEW) as page:
    lab_runner.apply_pending(page)
    page.text("intro")

    page.heading("h_results")
    page.controls("source", "metric")
    lab_runner.source_notice(page)
    page.figure("by_position")
    page.text("reading")
    if not page.embedded:
        lab_runner.gap_table(page)

    page.heading("h_extension")
    page.text("extension")
    page.figure("extension")

    page.heading("h_training")
    page.figure("training")

    page.heading("h_live")
    page.text("live")
    page.controls("set", "train_length")
    page.controls("steps", "seed")
    lab_runner.live_panel(page)

    page.explain()
