r"""The model as transformers loads it: Llama's own classes, float32 weights, eager attention, and the config that the
GGUF file's own header declares (read here with the ``gguf`` package, independently of transformers)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from posenc_real import RealModel, forward, tokenize


def test_the_model_is_transformers_llama_in_float32_with_eager_attention(real: RealModel) -> None:
    from transformers import LlamaForCausalLM

    assert isinstance(real.model, LlamaForCausalLM)
    assert not real.model.training
    assert {p.dtype for p in real.model.parameters()} == {torch.float32}
    assert real.model.config._attn_implementation == "eager"
    assert (real.name, real.quantization) == ("SmolLM2-135M-Instruct", "Q4_1")


def test_the_config_is_the_one_the_gguf_header_declares(real: RealModel, model_file: Path) -> None:
    import gguf

    fields = gguf.GGUFReader(model_file).fields

    def read(key: str) -> float:
        return fields[key].contents()

    assert real.num_layers == read("llama.block_count") == 30
    assert real.num_heads == read("llama.attention.head_count") == 9
    assert real.num_kv_heads == read("llama.attention.head_count_kv") == 3
    assert real.head_dim == read("llama.rope.dimension_count") == 64
    assert real.rope_theta == read("llama.rope.freq_base") == 100_000.0
    assert real.max_position_embeddings == read("llama.context_length") == 8192


def test_the_tokenizer_round_trips_prose(real: RealModel) -> None:
    text = "Rotary position embeddings rotate queries and keys."
    ids = tokenize(real, text)
    assert ids.dtype == np.int64 and 5 < ids.size < 20
    assert real.tokenizer.decode(ids.tolist()) == text


def test_forward_returns_logits_and_one_attention_map_per_layer(real: RealModel) -> None:
    ids = tokenize(real, "The cat sat on the mat because it was warm.")
    out = forward(real, ids, attentions=True)
    vocab = real.model.config.vocab_size
    assert out.logits.shape == (1, ids.size, vocab)
    assert len(out.attentions) == real.num_layers
    assert out.attentions[0].shape == (1, real.num_heads, ids.size, ids.size)
    rows = out.attentions[5][0].sum(-1)  # softmax rows sum to 1, and nothing attends to a later token
    torch.testing.assert_close(rows, torch.ones_like(rows))
    assert float(torch.triu(out.attentions[5][0], diagonal=1).abs().max()) == 0.0
    # positions passed explicitly as 0 … L − 1 are the default
    again = forward(real, ids, np.arange(ids.size))
    assert torch.equal(out.logits, again.logits)


def test_the_dequantized_copy_is_the_gguf_readers_output_bit_for_bit(real: RealModel, model_file: Path) -> None:
    import transformers

    from posenc_real.load import _load, dequantized_copy
    from posenc_ui.lessons.real.shipped import DEFAULT_TEXT

    folder = dequantized_copy(model_file)
    assert folder is not None  # the session's load read it, or wrote it after reading the GGUF
    read, read_tokenizer = _load(transformers, torch, str(model_file.parent), {"gguf_file": model_file.name})
    kept, kept_tokenizer = _load(transformers, torch, str(folder), {})
    ours, theirs = kept.state_dict(), read.state_dict()
    assert sorted(ours) == sorted(theirs)
    assert all(torch.equal(ours[name], theirs[name]) for name in theirs)
    assert kept.lm_head.weight.data_ptr() == kept.model.embed_tokens.weight.data_ptr()  # still tied, as in the GGUF
    for text in (DEFAULT_TEXT, "位置编码 — naïve café, x² ≤ 10⁴; def f(): return {'k': [1, 2]}"):
        ids = read_tokenizer(text, add_special_tokens=False)["input_ids"]
        assert kept_tokenizer(text, add_special_tokens=False)["input_ids"] == ids
    tokens = torch.tensor([read_tokenizer(DEFAULT_TEXT, add_special_tokens=False)["input_ids"]])
    with torch.no_grad():
        assert torch.equal(kept(tokens).logits, read(tokens).logits)


def test_a_copy_made_elsewhere_or_damaged_is_not_used(tmp_path: Path) -> None:
    import json

    from posenc_real.fetch import sha256_of
    from posenc_real.load import RECORD, _expected_record, dequantized_copy, dequantized_dir

    gguf_file = tmp_path / "SmolLM2-135M-Instruct.Q4_1.gguf"
    gguf_file.write_bytes(b"")
    folder = dequantized_dir(gguf_file)
    folder.mkdir()
    weights = folder / "model.safetensors"
    weights.write_bytes(b"weights")

    def record(**made_from: str) -> None:
        made = {**_expected_record(gguf_file), **made_from}
        (folder / RECORD).write_text(json.dumps({"made_from": made, "sha256": sha256_of(weights)}))

    assert dequantized_copy(gguf_file) is None  # no record yet
    record()
    assert dequantized_copy(gguf_file) == folder
    record(transformers="4.0.0")
    assert dequantized_copy(gguf_file) is None  # another transformers' reader made it
    record()
    weights.write_bytes(b"weightz")
    assert dequantized_copy(gguf_file) is None  # damaged since
