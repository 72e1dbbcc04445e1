r"""Page 2, first attempts at position: its view (``view.py``), figure builders (``figures.py``) and words
(``words.en.json``, ``words.zh.json``)."""
