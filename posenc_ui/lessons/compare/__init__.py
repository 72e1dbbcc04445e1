r"""Page 13, Compare: its view (``view.py``), figure builders (``figures.py``) and words (``words.en.json``,
``words.zh.json``); the view's sections in ``linear.py``."""
