r"""Page 11 — position inside a real language model: SmolLM2-135M-Instruct run live on the reader's text."""

from posenc_ui.frame import start
from posenc_ui.lessons.real import frequencies, rescaling, runner
from posenc_ui.lessons.real.relativity import shift_words, warm
from posenc_ui.lessons.real.view import VIEW

with start(VIEW) as page:
    page.text("intro", model=page.t("real.model_name"))
    if runner.ready(page):
        page.paste_box("text", height=200)
        accepted = runner.text_status(page)

        @page.section("h_relativity")
        def relativity() -> None:
            runner.warm(page, warm)
            page.figure("shift")
            page.controls("delta")
            page.check("shift")
            if accepted:
                page.text("shift", **page.ask(shift_words, page.lang))
            page.text("orders_intro")
            page.figure("orders")
            page.controls("seed")
            page.check("orders")
            page.text("orders")

        @page.section("h_frequencies")
        def frequencies_used() -> None:
            runner.warm(page, frequencies.warm)
            page.text("freq.intro")
            page.figure("pair_norms")
            page.controls("freq_part")
            page.check("pair_norms")
            page.text("freq.norms", "freq.stop_intro")
            page.figure("stopped")
            page.controls("stop_count")
            page.check("stopped")
            page.text("freq.stopped")

        @page.section("h_rescale")
        def rescaled() -> None:
            runner.warm(page, rescaling.warm)
            page.text("rescale.intro")
            page.figure("rescaled")
            page.controls("factor")
            page.check("core")
            page.check("rescaled")
            page.text("rescale.methods", "rescale.layers_intro")
            page.figure("nope_layers")
            page.check("nope_layers")
            page.text("rescale.layers")

    page.explain()
    page.text("sources")
