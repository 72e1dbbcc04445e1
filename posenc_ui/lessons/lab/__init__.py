r"""Page 12, the extrapolation lab: its view (``view.py``), figure builders (``figures.py``) and words
(``words.en.json``, ``words.zh.json``); the live run, trained beside the page, in ``runner.py``."""
