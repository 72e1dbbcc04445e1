r"""Page 9, position in today's models: its view (``view.py``, with the multimodal RoPE and MLA sections in
``media.py``), figure builders (``figures.py``) and words (``words.en.json``, ``words.zh.json``)."""
