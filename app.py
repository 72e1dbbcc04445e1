r"""posenc — how Transformers encode position. Home page: what position encoding is for, and the reading path.

Run with ``streamlit run app.py``; the teaching pages live in ``pages/`` (see ``posenc_ui/frame/``).
"""

from posenc_ui.frame import reading_path, start
from posenc_ui.lessons.home.view import VIEW

with start(VIEW) as page:
    page.text("intro")
    page.heading("h_path")
    reading_path(page.lang)
    page.text("about")
