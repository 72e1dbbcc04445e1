r"""Page 8, ALiBi: its view (``view.py``), figure builders (``figures.py``) and words (``words.en.json``,
``words.zh.json``)."""
