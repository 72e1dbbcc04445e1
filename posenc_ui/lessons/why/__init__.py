r"""Page 1, why attention needs position: its view (``view.py``), figure builders (``figures.py``) and words
(``words.en.json``, ``words.zh.json``)."""
