r"""Page 5, relative positions: its view (``view.py``), figure builders (``figures.py``) and words (``words.en.json``,
``words.zh.json``)."""
