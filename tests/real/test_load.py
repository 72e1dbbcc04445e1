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
