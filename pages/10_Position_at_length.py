r"""Page 10 — position at length: temperatures that grow with the context, the smallest RoPE base for a context
length, positions in a rolling KV cache with attention sinks, and position from data (FoX, CoPE, stick-breaking)."""

from posenc_ui.frame import start
from posenc_ui.lessons.length.view import VIEW

with start(VIEW) as page:
    page.text("intro")

    @page.section()  # temperatures: the s slider reruns this part only
    def temperature() -> None:
        page.heading("h_temperature")
        page.figure("multipliers")
        page.controls("ssmax_s")
        page.text("temperature", "multipliers_read")
        page.checks("llama4", "ssmax_su")
        page.heading("h_entropy")
        page.text("entropy")
        page.figure("entropy")
        page.check("sharpen")

    @page.section()  # the base bound: head size and context length
    def base() -> None:
        page.heading("h_base")
        page.text("base")
        page.figure("similarity")
        page.controls("head_dim", "context")
        page.text("similarity_read")
        page.checks("bound", "below")
        page.heading("h_models")
        page.figure("bounds")
        page.text("bounds_read")
        page.check("gemma4")

    @page.section()  # the rolling cache
    def rolling() -> None:
        page.heading("h_cache")
        page.text("cache_intro")
        page.figure("cache")
        page.controls("sinks", "window", "stream")
        page.text("cache_read")
        page.check("cache")

    @page.section()  # the sink logit
    def sink() -> None:
        page.heading("h_sink")
        page.text("sink_intro")
        page.controls("sink")
        page.figures("sink_weights", "row_sums")
        page.text("sink_read")
        page.check("sink")

    @page.section()  # position from data: one seed for every gate
    def gates() -> None:
        page.heading("h_gates")
        page.text("gates_intro")
        page.figure("gate_bias")
        page.controls("seed", "gate_length")
        page.text("gate_bias_read")
        page.checks("fox_alibi", "fox_toeplitz", "cope")
        page.heading("h_gate_weights")
        page.text("gate_weights_intro")
        page.figure("gate_weights")
        page.text("gate_weights_read")
        page.checks("stick", "stick_recency")
        page.text("takeaway")

    page.explain()
    page.text("sources")
