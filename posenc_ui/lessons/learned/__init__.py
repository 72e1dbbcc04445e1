r"""Page 4, learned absolute positions: its view (``view.py``), figure builders (``figures.py``) and words
(``words.en.json``, ``words.zh.json``)."""
