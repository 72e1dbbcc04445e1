r"""Page 7 — context extension: PI, NTK, dynamic NTK, YaRN, Llama 3, LongRoPE on real models, and a paste box."""

from posenc_ui.frame import start
from posenc_ui.lessons.extension.models import preset_words
from posenc_ui.lessons.extension.view import VIEW, readouts

with start(VIEW) as page:

    @page.section()  # the lesson: a slider that all of it reads reruns it, not the frame around it
    def lesson() -> None:
        page.heading("h_master")
        page.figure("wavelengths")  # first: the words and choices above it pushed it off a phone's first screen
        page.text("intro")
        page.controls("model")
        page.controls("method")
        page.controls("layer", "factor", "stretch")
        page.text("readout", **page.ask(readouts))
        page.text("master")
        page.checks("ntk", "dynamic", "interpolation", "uniform")

        page.heading("h_base")
        page.text("base_change")
        page.figure("divisors")
        page.check("base_change")
        page.heading("h_regimes")
        page.text("regimes")
        page.controls("beta_fast", "beta_slow")
        page.figure("regimes")
        page.check("regimes")
        page.heading("h_ramp")
        page.text("ramp")
        page.figure("ramp")
        page.text("by_parts", "errata_yarn")
        page.check("errata_cycle")

        page.heading("h_temperature")
        page.text("temperature")
        page.figure("temperature")
        page.check("temperature")
        page.heading("h_entropy")
        page.text("entropy")
        page.figure("entropy")
        page.check("entropy")

        page.heading("h_ood")
        page.text("ood")
        page.figure("ood")

        @page.section("h_rerope")
        def rerope() -> None:
            page.text("rerope")
            page.controls("window")
            page.figure("seen")
            page.checks("rerope_angles", "rerope_passes")

        page.heading("h_layers")  # the model picked above, by kind of layer (its strip is page 9's)
        page.text("layers")
        page.figure("layer_wavelengths")
        page.text("preset_values", **page.ask(preset_words, page.lang))

    page.heading("h_models")  # every preset at once: reads no widget
    page.text("models")
    page.figure("models")

    @page.section("h_paste")
    def paste() -> None:
        page.text("paste")
        page.paste_box("config", height=260)
        page.figure("pasted_layers")
        page.controls("pasted_layer")
        page.figure("pasted")
        page.text("takeaway")

    page.explain()
    page.text("sources")
