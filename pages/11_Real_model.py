r"""Page 11 — position inside a real language model: SmolLM2-135M-Instruct run live on the reader's text."""

from posenc_ui.frame import start
from posenc_ui.lessons.real import beyond, distance, frequencies, rescaling, runner, sinks
from posenc_ui.lessons.real.relativity import shift_words, warm
from posenc_ui.lessons.real.view import VIEW

with start(VIEW) as page:
    page.text("intro", model=page.t("real.model_name"))
    page.paste_box("text", height=120)  # short: the first figure fits a phone's first screen
    if runner.ready(page):  # the shipped passage needs no model; another text loads it (or reads the passage)
        runner.text_status(page)  # a refused text: the figures read the last one accepted

        @page.section("h_relativity")
        def relativity() -> None:
            runner.warm(page, warm)
            page.figure("shift")
            page.controls("delta")
            page.check("shift")
            page.text("shift", **page.ask(shift_words, page.lang))
            page.text("orders_intro")
            page.figure("orders")
            page.controls("seed")
            page.check("orders")
            page.text("orders")

        page.text("about")  # what the model is and how it arrives, under the first figure

        @page.section("h_distance")
        def by_distance() -> None:
            runner.warm(page, distance.warm)
            page.text("distance_intro")
            page.figure("distance")
            page.check("mass")
            if page.ask(distance.reaches_far):
                page.check("decay")
            else:
                page.text("decay_short", tokens=page.ask(distance.text_length), reach=distance.FAR_DISTANCE)
            page.text("classes_intro", **distance.RULES)
            page.figure("classes")
            page.text("classes", **page.ask(distance.class_counts))
            page.text("decay_intro")
            page.figure("decay")
            page.text("decay")

        @page.section("h_sinks")
        def attention_sinks() -> None:
            runner.warm(page, sinks.warm)
            page.text("sinks_intro")
            page.figure("first_token")
            page.check("first_token")
            page.text("streaming_intro", sinks=sinks.SINK_TOKENS)
            page.controls("window")
            page.figure("streaming")
            page.check("streaming")
            page.text("streaming")

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

        @page.section("h_beyond")
        def past_the_training_length() -> None:
            page.text("beyond.intro", **beyond.shown(page.lang))
            page.figure("beyond")
            page.check("beyond")
            page.text("beyond.words", **beyond.measured(page.lang))
            page.text("beyond.shown", **beyond.shown(page.lang))

    page.explain()
    page.text("sources")
