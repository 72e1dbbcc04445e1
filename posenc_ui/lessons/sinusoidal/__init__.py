r"""Page 3, sinusoidal encoding: its view (``view.py``), figure builders (``figures.py``, ``figures_faq.py``) and words
(``words.en.json``, ``words.zh.json``); the view's sections in ``faq.py``."""
