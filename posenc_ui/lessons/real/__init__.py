r"""Page 11, position inside a real language model: SmolLM2-135M-Instruct (the instruct checkpoint, 4-bit Q4_1
weights, dequantized to float32) run live through transformers' own code on the reader's text. Its view
(``view.py``, one module a section: ``relativity.py``), the shared model and text (``model.py``), the progress message
of the first load (``runner.py``, the page's one Streamlit module), figure builders (``figures.py``) and words
(``words.en.json``, ``words.zh.json``)."""
