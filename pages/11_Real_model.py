r"""Page 11 — position inside a real language model: SmolLM2-135M-Instruct run live on the reader's text."""

from posenc_ui.frame import start
from posenc_ui.lessons.real import runner
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

    page.explain()
    page.text("sources")
