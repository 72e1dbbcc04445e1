r"""The home page: its view (``view.py``) and words (``words.en.json``, ``words.zh.json``)."""
