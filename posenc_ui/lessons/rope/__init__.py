r"""Page 6, RoPE: its view (``view.py``), figure builders (``figures.py``, ``figures_beyond.py``, ``figures_clocks.py``)
and words (``words.en.json``, ``words.zh.json``); the view's sections in ``beyond.py``, ``inputs.py``,
``long_range.py``."""
