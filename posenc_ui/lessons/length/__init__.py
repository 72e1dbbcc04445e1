r"""Page 10, position at length: its view (``view.py``, with the cache and gate sections in ``cache.py`` and
``gates.py``), figure builders (``figures.py``) and words (``words.en.json``, ``words.zh.json``)."""
