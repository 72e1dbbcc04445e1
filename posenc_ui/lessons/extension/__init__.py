r"""Page 7, context extension: its view (``view.py``), figure builders (``figures.py``, ``figures_layers.py``,
``figures_reasons.py``) and words (``words.en.json``, ``words.zh.json``); the view's sections in ``layers.py``,
``models.py``, ``reasons.py``, ``temperature.py``."""
