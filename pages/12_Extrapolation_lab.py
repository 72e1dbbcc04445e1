r"""Page 12 — the extrapolation lab: train tiny Transformers per position encoding on three tasks, test past L_train."""

from posenc_ui.frame import start
from posenc_ui.lessons.lab import runner as lab_runner
from posenc_ui.lessons.lab.view import VIEW, has_rope, own_settings, shown_results

with start(VIEW) as page:
    lab_runner.apply_pending(page)

    @page.section()  # the lesson: a slider that all of it reads reruns it, not the frame around it
    def lesson() -> None:
        page.heading("h_results")
        page.controls("task")
        page.figure("by_position")  # the words and choices that set it up follow it: a phone's first screen shows it
        page.controls("source", "metric")
        lab_runner.source_notice(page)
        if own := own_settings(page.values):
            page.controls(*own)  # the chosen task's own settings (the lag task's lag)
        lab_runner.shown_caption(page)
        page.text("intro")
        lab_runner.about_task(page)
        lab_runner.findings(page)
        page.checks("inside", "extrapolation")
        lab_runner.band_table(page)

        page.heading("h_designs")
        page.text("designs")
        page.figure("designs")
        page.checks("hybrid", "p_rope", "fox")
        page.text("designs_scale")

        page.heading("h_extension")
        if has_rope(page.values):
            page.text("extension", factor=shown_results(page.values)["config"]["extension_factor"])
            page.figure("extension")
        else:
            page.text("no_rope")

        page.heading("h_training")
        page.figure("training")

        page.heading("h_live")
        page.text("live")
        page.controls("set", "train_length")
        page.controls("steps", "seed")
        lab_runner.live_panel(page)

    page.explain()
    page.text("sources")
