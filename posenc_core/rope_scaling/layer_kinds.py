r"""What a decoder layer is and how its attention sees position: the two registries :func:`~.layers.model_layers`
fills its records from, and the families whose config.json says it under names of their own.

A layer's ``block`` (:data:`BLOCK_KINDS`) is what mixes its tokens: attention, a recurrent / state-space mixer, a
short convolution, attention beside a recurrent mixer (Zamba's hybrid layers), cross-attention to another input
(Mllama's image layers) or nothing at all (an MLP-only layer). Its ``position`` (:data:`POSITION_KINDS`) is how it
sees where a token is: RoPE, nothing (NoPE), a learned or sinusoidal table added to the input (GPT-2, BART, Marian),
a learned bias per distance bucket (T5), ALiBi's linear bias (Bloom, MPT), or the order of its recurrence. Each
position kind names the encoding family of :data:`posenc_core.FAMILIES` that teaches it (``family``), so the app
reads one registry for its words, colours and links.

:data:`FAMILY_LAYOUTS` holds, per ``model_type``, what its modeling code does that its config says under names of its
own: a non-RoPE scheme (with the config field that counts its positions or buckets), and a hybrid layer layout
(RecurrentGemma's ``block_types``, Jamba's ``attn_layer_period`` / ``attn_layer_offset``, Bamba's
``attn_layer_indices``, Kimi-Linear's ``linear_attn_config``, Mllama's ``cross_attention_layers``), each with the
transformers code that decides it. ``tests/core/test_model_layers_transformers.py`` builds every family's model and
holds these to what transformers builds.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ..errors import PosEncError, as_int

__all__ = [
    "BLOCK_KINDS",
    "FAMILY_LAYOUTS",
    "LAYER_TYPE_BLOCKS",
    "POSITION_KINDS",
    "BlockKind",
    "FamilyLayout",
    "PositionKind",
    "family_layout",
]


@dataclass(frozen=True)
class BlockKind:
    r"""What mixes a layer's tokens. ``attends``: the layer has self-attention (so a position kind applies to it);
    ``recurrent``: a recurrent / state-space mixer runs in the layer too (beside the attention, where it attends)."""

    name: str
    attends: bool
    description: str
    recurrent: bool = False


@dataclass(frozen=True)
class PositionKind:
    r"""How a layer sees position. ``family``: the encoding family (:data:`posenc_core.FAMILIES`) that teaches it,
    None where none does (the order of a recurrence, a layer without token mixing); ``counted``: what the record's
    ``positions`` counts (the table's rows, the bias's buckets), None where it counts nothing."""

    name: str
    family: str | None
    counted: str | None
    description: str


#: Every kind of decoder layer, in the order the app lists them.
BLOCK_KINDS: Mapping[str, BlockKind] = MappingProxyType(
    {
        entry.name: entry
        for entry in (
            BlockKind("attention", True, "self-attention over the sequence"),
            BlockKind(
                "hybrid",
                True,
                "self-attention beside a recurrent / state-space mixer (Zamba, Falcon-H1)",
                recurrent=True,
            ),
            BlockKind("cross_attention", False, "attention to another input (an image), not to the sequence"),
            BlockKind(
                "recurrent",
                False,
                "a recurrent / state-space / linear-attention mixer: no softmax attention",
                recurrent=True,
            ),
            BlockKind("convolution", False, "a short gated convolution over the last few tokens (LFM2)"),
            BlockKind("mlp", False, "no token mixing at all: an MLP or mixture-of-experts block only"),
        )
    }
)

#: Every way a layer sees position, in the order the app lists them.
POSITION_KINDS: Mapping[str, PositionKind] = MappingProxyType(
    {
        entry.name: entry
        for entry in (
            PositionKind("rope", "rope", None, "q and k rotated by the position (RoPE)"),
            PositionKind("nope", "none", None, "attention without any position signal (NoPE)"),
            PositionKind("learned_absolute", "learned", "positions", "a learned vector per position, added once"),
            PositionKind("sinusoidal_absolute", "sinusoidal", "positions", "a fixed sinusoid per position, added once"),
            PositionKind("relative_bias", "t5", "buckets", "a learned bias per bucket of distance (T5)"),
            PositionKind("alibi", "alibi", None, "a bias linear in the distance, one slope a head (ALiBi)"),
            PositionKind(
                "data_dependent", "fox", "distances", "a bias over distance that each token computes from its content"
            ),
            PositionKind("recurrence", None, None, "the order of the recurrence: no position index at all"),
            PositionKind("none", None, None, "no token mixing, so no position either"),
        )
    }
)

#: A ``layer_types`` entry (as transformers' configs name them) → the block it builds; any other name is attention.
LAYER_TYPE_BLOCKS: Mapping[str, str] = MappingProxyType(
    {
        "linear_attention": "recurrent",
        "mamba": "recurrent",
        "recurrent": "recurrent",
        "conv": "convolution",
        "moe": "mlp",
        "mlp": "mlp",
        "hybrid": "hybrid",
        "cross_attention": "cross_attention",
    }
)


@dataclass(frozen=True)
class FamilyLayout:
    r"""What one family's modeling code does with position and layers that its config says under names of its own.

    ``position``: the position kind of its attention layers where it is not RoPE (None: read as usual);
    ``counts``: the config fields, in order, that give ``positions`` (the learned table's rows, T5's buckets);
    ``default_count``: that count where the config class fills it in and config.json may leave it out;
    ``layer_count``: the fields that count its decoder layers, first found wins (an encoder-decoder's decoder);
    ``head``: the fields that give its head size (d_kv), or a pair (hidden, heads) of fields to divide;
    ``layout(config, count)``: its layer types (``layer_types`` names) where the config class derives them;
    ``window``: the field that gives its attention layers' sliding window; ``attention_nope``: its attention layers
    do not rotate although the config may carry RoPE fields; ``blocks``: what the family's own layer-type names build
    (Zaya's "hybrid" layers are plain attention); ``sliding``: its layer types that attend in ``sliding_window``;
    ``window_unused``: its config stores a ``sliding_window`` that its modeling code never masks with (Moshi);
    ``refusal``: the sentence saying what posenc does not model about it; ``source``: the transformers code that
    decides it."""

    model_types: tuple[str, ...]
    source: str
    position: str | None = None
    counts: tuple[str, ...] = ()
    default_count: int | None = None
    layer_count: tuple[str, ...] = ()
    head: tuple[str, ...] = ()
    layout: Callable[[Mapping[str, object], int], list[str]] | None = None
    window: str | None = None
    attention_nope: bool = False
    blocks: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    sliding: tuple[str, ...] = ()
    window_unused: bool = False
    refusal: str | None = None


def _cycle(config: Mapping[str, object], count: int) -> list[str]:
    r"""RecurrentGemmaConfig.layers_block_type: ``(block_types * 100)[:num_hidden_layers]``, recurrent → linear."""
    blocks = config.get("block_types", ["recurrent", "recurrent", "attention"])
    if not isinstance(blocks, list) or not blocks or not all(item in ("recurrent", "attention") for item in blocks):
        raise PosEncError(f"block_types must be a list of 'recurrent' / 'attention', got {blocks!s:.60}")
    return ["recurrent" if blocks[i % len(blocks)] == "recurrent" else "sliding_attention" for i in range(count)]


def _period(default_period: int, default_offset: int, attention: str) -> Callable[[Mapping[str, object], int], list]:
    def layout(config: Mapping[str, object], count: int) -> list[str]:
        period = as_int("attn_layer_period", config.get("attn_layer_period", default_period), lo=1)
        offset = as_int("attn_layer_offset", config.get("attn_layer_offset", default_offset), lo=0)
        return [attention if i % period == offset else "mamba" for i in range(count)]

    return layout


def _zamba(config: Mapping[str, object], count: int) -> list[str]:
    r"""ZambaConfig.__post_init__: two mamba layers, a hybrid one, then hybrid where i % period == offset."""
    period = as_int("attn_layer_period", config.get("attn_layer_period", 6), lo=1)
    offset = as_int("attn_layer_offset", config.get("attn_layer_offset", 4), lo=0)
    head = ["mamba", "mamba", "hybrid"][:count]
    return head + ["hybrid" if i % period == offset else "mamba" for i in range(max(count - 3, 0))]


def _indices(config: Mapping[str, object], count: int) -> list[str]:
    r"""BambaConfig.layers_block_type: attention where the index is in ``attn_layer_indices``, else mamba."""
    chosen = config.get("attn_layer_indices") or []
    if not isinstance(chosen, list):
        raise PosEncError(f"attn_layer_indices must be a list of layer indices, got {chosen!s:.60}")
    return ["full_attention" if i in chosen else "mamba" for i in range(count)]


def _kimi(config: Mapping[str, object], count: int) -> list[str]:
    r"""KimiLinearConfig.__post_init__: ``linear_attn_config``'s 1-based full_attn_layers / kda_layers, else a full
    layer every 4th (i % 4 == 0, i > 0)."""
    linear = config.get("linear_attn_config") or {}
    if isinstance(linear, Mapping) and "full_attn_layers" in linear and "kda_layers" in linear:
        types = ["full_attention"] * count
        for key, kind in (("full_attn_layers", "full_attention"), ("kda_layers", "linear_attention")):
            for layer in linear[key]:
                types[as_int(key, layer, lo=1, hi=count) - 1] = kind
        return types
    return ["full_attention" if i and i % 4 == 0 else "linear_attention" for i in range(count)]


def _cross(config: Mapping[str, object], count: int) -> list[str]:
    r"""MllamaTextConfig: cross-attention at ``cross_attention_layers`` (default [3, 8, …, 38]), self-attention
    elsewhere."""
    chosen = config.get("cross_attention_layers") or [3, 8, 13, 18, 23, 28, 33, 38]
    return ["cross_attention" if i in chosen else "full_attention" for i in range(count)]


def _nemotron_h(config: Mapping[str, object], count: int) -> list[str]:
    r"""NemotronHConfig: a checkpoint's ``hybrid_override_pattern`` (M Mamba, * attention, - MLP, E MoE), one
    character a layer; else its default four layers."""
    pattern = config.get("hybrid_override_pattern")
    if pattern is None:
        return ["linear_attention", "moe", "full_attention", "mlp"]
    names = {"M": "linear_attention", "E": "moe", "*": "full_attention", "-": "mlp"}
    if not isinstance(pattern, str) or not pattern or any(char not in names for char in pattern):
        raise PosEncError(f"hybrid_override_pattern must be a string of M, *, - and E, got {pattern!s:.60}")
    return [names[char] for char in pattern]


def _gpt_neo(config: Mapping[str, object], count: int) -> list[str]:
    r"""GPTNeoConfig.expand_attention_types_params: ``attention_types`` [[["global", "local"], 12]] repeats each
    pattern its count of times; "local" layers slide over window_size keys, "global" ones see everything."""
    layers = config.get("attention_layers")
    if layers is None:
        layers = []
        for pattern, repeats in config.get("attention_types") or [[["global", "local"], 12]]:
            layers.extend(list(pattern) * as_int("attention_types repeats", repeats, lo=0))
    if not isinstance(layers, list) or any(kind not in ("global", "local") for kind in layers):
        raise PosEncError(f"attention_layers must be a list of 'global' / 'local', got {layers!s:.60}")
    return ["sliding_attention" if kind == "local" else "full_attention" for kind in layers]


def _recurrent(config: Mapping[str, object], count: int) -> list[str]:
    return ["recurrent"] * count


_ENC_DEC = ("decoder_layers", "num_decoder_layers", "num_layers")
_BART_HEAD = ("d_model", "decoder_attention_heads")

_LAYOUTS = (
    FamilyLayout(
        ("gpt2", "gpt-sw3", "gpt_bigcode", "openai-gpt", "imagegpt", "decision_transformer"),
        "GPT2Model.wpe = nn.Embedding(config.max_position_embeddings, …) (n_positions), added to the input",
        position="learned_absolute",
        counts=("n_positions", "max_position_embeddings"),
        default_count=1024,
    ),
    FamilyLayout(
        ("gpt_neo",),
        "GPTNeoModel.wpe = nn.Embedding(max_position_embeddings, …); GPTNeoSelfAttention: a 'local' layer's mask "
        "keeps the window_size keys i − window_size < j ≤ i (tril(bias, -window_size) removed)",
        position="learned_absolute",
        counts=("max_position_embeddings",),
        default_count=2048,
        layout=_gpt_neo,
        window="window_size",
    ),
    FamilyLayout(
        ("opt", "biogpt"),
        "OPTLearnedPositionalEmbedding(max_position_embeddings, …) (2 rows more, an offset never read as a position)",
        position="learned_absolute",
        counts=("max_position_embeddings",),
        default_count=2048,
    ),
    FamilyLayout(
        (
            "bert",
            "bert-generation",
            "big_bird",
            "camembert",
            "data2vec-text",
            "electra",
            "ernie",
            "megatron-bert",
            "rembert",
            "roberta",
            "roberta-prelayernorm",
            "roc_bert",
            "xlm-roberta",
            "xlm-roberta-xl",
            "xmod",
            "git",
        ),
        "BertEmbeddings.position_embeddings = nn.Embedding(max_position_embeddings, …), added to the input",
        position="learned_absolute",
        counts=("max_position_embeddings",),
        default_count=512,
    ),
    FamilyLayout(
        ("xlm",),
        "XLMModel.position_embeddings = nn.Embedding(max_position_embeddings, emb_dim), added to the input",
        position="learned_absolute",
        counts=("max_position_embeddings",),
        default_count=512,
        head=("emb_dim", "n_heads"),
    ),
    FamilyLayout(
        ("bart", "mbart", "plbart", "mvp", "blenderbot", "blenderbot-small", "bigbird_pegasus", "trocr"),
        "BartLearnedPositionalEmbedding(max_position_embeddings, d_model) in the decoder, added to its input",
        position="learned_absolute",
        counts=("max_position_embeddings",),
        default_count=1024,
        layer_count=_ENC_DEC,
        head=_BART_HEAD,
    ),
    FamilyLayout(
        ("led",),
        "LEDDecoder: LEDLearnedPositionalEmbedding(max_decoder_position_embeddings, d_model)",
        position="learned_absolute",
        counts=("max_decoder_position_embeddings",),
        default_count=1024,
        layer_count=_ENC_DEC,
        head=_BART_HEAD,
    ),
    FamilyLayout(
        ("whisper",),
        "WhisperDecoder.embed_positions = WhisperPositionalEmbedding(max_target_positions, d_model): learned",
        position="learned_absolute",
        counts=("max_target_positions",),
        default_count=448,
        layer_count=_ENC_DEC,
        head=_BART_HEAD,
    ),
    FamilyLayout(
        ("marian", "pegasus", "pegasus_x", "m2m_100", "nllb-moe", "fsmt"),
        "…SinusoidalPositionalEmbedding(max_position_embeddings, d_model) in the decoder: fixed, added to its input",
        position="sinusoidal_absolute",
        counts=("max_position_embeddings",),
        default_count=1024,
        layer_count=_ENC_DEC,
        head=_BART_HEAD,
    ),
    FamilyLayout(
        ("seamless_m4t", "seamless_m4t_v2"),
        "SeamlessM4TDecoder: SeamlessM4TSinusoidalPositionalEmbedding(max_position_embeddings, hidden_size)",
        position="sinusoidal_absolute",
        counts=("max_position_embeddings",),
        default_count=1024,
        layer_count=_ENC_DEC,
        head=("hidden_size", "decoder_attention_heads"),
    ),
    FamilyLayout(
        ("xglm",),
        "XGLMSinusoidalPositionalEmbedding(max_position_embeddings, d_model), added to the input",
        position="sinusoidal_absolute",
        counts=("max_position_embeddings",),
        default_count=2048,
        head=("d_model", "attention_heads"),
    ),
    FamilyLayout(
        ("ctrl",),
        "CTRLModel: pos_encoding = positional_encoding(n_positions, d_model_size): sinusoidal, added to the input",
        position="sinusoidal_absolute",
        counts=("n_positions",),
        default_count=256,
        head=("n_embd", "n_head"),
    ),
    FamilyLayout(
        ("t5", "mt5", "umt5", "switch_transformers", "longt5"),
        "T5Attention.relative_attention_bias = nn.Embedding(relative_attention_num_buckets, n_heads): a bias a bucket",
        position="relative_bias",
        counts=("relative_attention_num_buckets",),
        default_count=32,
        layer_count=("num_decoder_layers", "num_layers"),
        head=("d_kv",),
    ),
    FamilyLayout(
        ("bloom",),
        "BloomModel.build_alibi_tensor: a linear bias a head, no position table",
        position="alibi",
        layer_count=("n_layer", "num_hidden_layers"),
    ),
    FamilyLayout(
        ("mpt",),
        "MptModel.build_mpt_alibi_tensor: a linear bias a head, no position table",
        position="alibi",
        layer_count=("n_layers",),
        head=("d_model", "n_heads"),
    ),
    FamilyLayout(
        ("mamba", "mamba2", "falcon_mamba", "rwkv", "xlstm"),
        "MambaModel / RwkvModel / xLSTMModel: every layer a recurrent or state-space mixer, no attention",
        layout=_recurrent,
    ),
    FamilyLayout(
        ("recurrent_gemma",),
        "RecurrentGemmaConfig.layers_block_type; RecurrentGemmaSdpaAttention: partial RoPE in attention_window_size",
        layout=_cycle,
        window="attention_window_size",
    ),
    FamilyLayout(
        ("jamba",),
        "JambaConfig.layers_block_type (attention where i % attn_layer_period == attn_layer_offset); JambaAttention "
        "applies no rotary embedding",
        layout=_period(8, 4, "full_attention"),
        attention_nope=True,
    ),
    FamilyLayout(
        ("zamba",),
        "ZambaConfig.__post_init__ layers_block_type; ZambaAttention applies no rotary embedding",
        layout=_zamba,
        attention_nope=True,
    ),
    FamilyLayout(
        ("nemotron_h",),
        "NemotronHConfig._pattern_to_list (hybrid_override_pattern); NemotronHAttention applies no rotary embedding",
        layout=_nemotron_h,
        attention_nope=True,
    ),
    FamilyLayout(
        ("falcon_h1",),
        "FalconH1DecoderLayer: a Mamba-2 mixer and RoPE self-attention side by side in every layer",
        layout=lambda config, count: ["hybrid"] * count,
    ),
    FamilyLayout(
        ("zaya",),
        "ZayaDecoderLayer: its 'hybrid' / 'hybrid_sliding' layer types are self-attention, each with its own RoPE",
        blocks=MappingProxyType({"hybrid": "attention", "hybrid_sliding": "attention"}),
        sliding=("hybrid_sliding",),
    ),
    FamilyLayout(
        ("inkling_text", "inkling2_text", "inkling", "inkling2"),
        "InklingAttention: no RoPE; InklingRelativeLogits adds a bias over the last rel_extent distances that each "
        "query mixes from a learned bank by its own hidden state; 'hybrid_sliding' layers attend in "
        "sliding_window_size (config.json's name; sliding_window in the config class)",
        position="data_dependent",
        counts=("rel_extent",),
        default_count=1024,
        blocks=MappingProxyType({"hybrid": "attention", "hybrid_sliding": "attention"}),
        sliding=("hybrid_sliding",),
        window="sliding_window_size",
    ),
    FamilyLayout(
        ("moshi",),
        "MoshiDecoderLayer keeps config.sliding_window but MoshiModel masks every layer with create_causal_mask: "
        "no window",
        window_unused=True,
    ),
    FamilyLayout(
        ("xlnet",),
        "XLNetRelativeAttention",
        refusal="XLNet attends with Transformer-XL's relative sinusoids and learned biases over a permuted order; "
        "posenc does not model it",
    ),
    FamilyLayout(
        ("cpmant",),
        "CpmAntSegmentPositionEmbedding",
        refusal="CPM-Ant adds a learned bias by segment pair and distance bucket; posenc does not model it",
    ),
    FamilyLayout(
        ("prophetnet",),
        "ProphetNetNgramSelfAttention",
        refusal="ProphetNet's decoder predicts several future tokens in streams with their own relative buckets "
        "beside a learned table; posenc does not model it",
    ),
    FamilyLayout(
        ("hrm_text",),
        "HrmTextModel: num_layers_per_stack layers run again in H_cycles × (L_cycles + 1) slots",
        refusal="HRM runs one stack of layers again and again in cycles, so its layers are not one list; posenc does "
        "not model it",
    ),
    FamilyLayout(
        ("blt",),
        "BltModel: byte-level local encoder and decoder around a global transformer over patches",
        refusal="BLT reads bytes with a local encoder and decoder around a global transformer over patches; posenc "
        "does not model it",
    ),
    FamilyLayout(
        ("bamba",),
        "BambaConfig.layers_block_type: attention at attn_layer_indices, mamba elsewhere; BambaAttention rotates",
        layout=_indices,
    ),
    FamilyLayout(
        ("kimi_linear",),
        "KimiLinearConfig.__post_init__ (linear_attn_config); KimiMLAAttention applies no rotary embedding",
        layout=_kimi,
        attention_nope=True,
    ),
    FamilyLayout(
        ("mllama_text_model", "mllama"),
        "MllamaTextModel: MllamaCrossAttentionDecoderLayer at cross_attention_layers (no RoPE), self-attention "
        "layers with RoPE elsewhere",
        layout=_cross,
    ),
)

#: model_type → its :class:`FamilyLayout`.
FAMILY_LAYOUTS: Mapping[str, FamilyLayout] = MappingProxyType(
    {model_type: entry for entry in _LAYOUTS for model_type in entry.model_types}
)


def family_layout(config: Mapping[str, object]) -> FamilyLayout | None:
    r"""The :class:`FamilyLayout` of ``config["model_type"]``, or None for a family read as usual; a family posenc
    does not model is refused with its sentence."""
    entry = FAMILY_LAYOUTS.get(str(config.get("model_type")))
    if entry is not None and entry.refusal is not None:
        family = str(config.get("model_type"))
        raise PosEncError(
            f"{entry.refusal} (model_type {family!r})", code="not_modelled", family=family, reason=entry.refusal
        )
    return entry
