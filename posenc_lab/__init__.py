r"""The extrapolation lab (page 12): tiny Transformers that differ only in how they encode position, trained on a task
and tested past their training length.

Its modules, none of which imports Streamlit:

- :mod:`.tasks` — the task registry (:data:`~.tasks.TASKS`), the run settings (:class:`~.tasks.LabConfig`,
  :data:`~.tasks.PRESETS`) and the text corpus; NumPy only.
- :mod:`.runs` — the committed runs (``assets/lab/``, their one reader) and the verdict rule: does an encoding
  extrapolate on a run; NumPy only.
- :mod:`.queue` — the disk cache and per-device queue of live runs; no torch.
- :mod:`.hooks`, :mod:`.model`, :mod:`.stack`, :mod:`.batches`, :mod:`.train` — the torch side: each family's
  position hooks, the one model, every encoding trained as one stacked model, the tasks' batches, training and
  evaluation. Importing any of these imports torch.
- ``python -m posenc_lab`` — the command line (:func:`.train.main`).

The maths the lab uses (the encodings, RoPE's frequencies, the torch versions of both) stays in :mod:`posenc_core`.
"""
