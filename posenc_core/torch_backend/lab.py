r"""The extrapolation lab: tiny Transformers that differ only in how they encode position, tested past their
training length.

**The task** (a noisy lag-copy source with a closed-form optimum) and the settings are in
:mod:`posenc_core.lab_task`, which imports no torch.

**The models** are identical pre-LN decoders (same seed, same batches, same widths) whose position handling is one of
:data:`ENCODINGS`: none (NoPE), learned absolute (a table as long as the longest evaluation, whose rows past the
training length are never trained — the hard wall of BERT-style tables), sinusoidal, RoPE, ALiBi, or T5's learned
bucket bias. After training at ``train_length`` each is scored per position out to ``eval_factor`` × that length,
and the RoPE model is also run zero-shot at ``extension_factor`` × with PI, NTK-aware and YaRN frequencies taken from
:func:`posenc_core.rope_frequencies`.

Command line (deterministic for a seed; ``--preset gpu`` is the larger run for a CUDA machine)::

    python -m posenc_core.torch_backend.lab --out results.json [--preset cpu|gpu|tiny] [--seed 0] [--device cpu]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
import time
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from ..lab_task import ENCODINGS, EXTENSIONS, PRESETS, LabConfig, optimal_loss
from . import alibi_bias, apply_rope, pick_device, rope_frequencies, sinusoidal, t5_relative_bucket

__all__ = ["ENCODINGS", "EXTENSIONS", "PRESETS", "LabCancelled", "LabConfig", "optimal_loss", "run_lab"]


class LabCancelled(Exception):
    """Raised inside :func:`run_lab` when the progress callback asks to stop."""


# --- the data --------------------------------------------------------------------------------------------------


def sample_batch(config: LabConfig, length: int, batch: int, generator: torch.Generator) -> torch.Tensor:
    """(batch, length) int64 tokens from the lag-copy source (on the CPU; deterministic for the generator)."""
    perm = torch.randperm(config.vocab_size, generator=torch.Generator().manual_seed(config.seed))
    tokens = torch.randint(config.vocab_size, (batch, length), generator=generator)
    keep = torch.rand((batch, length), generator=generator) >= config.noise
    for t in range(config.lag, length):  # sequential: x_t depends on the already-final x_{t−lag}
        tokens[:, t] = torch.where(keep[:, t], perm[tokens[:, t - config.lag]], tokens[:, t])
    return tokens


# --- the model -------------------------------------------------------------------------------------------------


class Block(nn.Module):
    """Pre-LN decoder block: causal self-attention, then a 4× MLP, each on a residual branch."""

    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
        self.n_heads = n_heads
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None, rope: tuple | None) -> torch.Tensor:
        b, length, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, length, 3, self.n_heads, d // self.n_heads).permute(2, 0, 3, 1, 4)
        if rope is not None:  # (positions, inv_freq, attention_factor): rotate q and k, (B, H, L, d_head)
            positions, inv_freq, factor = rope
            q = apply_rope(q, positions, inv_freq, attention_factor=factor)
            k = apply_rope(k, positions, inv_freq, attention_factor=factor)
        attn = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=mask is None)
        x = x + self.proj(attn.transpose(1, 2).reshape(b, length, d))
        return x + self.mlp(self.ln2(x))


class TinyLM(nn.Module):
    """A decoder whose one varying part is ``encoding``; shared weights are created first, so equal seeds give
    equal shared initial weights across encodings."""

    def __init__(self, config: LabConfig, encoding: str) -> None:
        super().__init__()
        self.config, self.encoding = config, encoding
        d, h = config.d_model, config.n_heads
        self.tokens = nn.Embedding(config.vocab_size, d)
        self.blocks = nn.ModuleList(Block(d, h) for _ in range(config.n_layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, config.vocab_size)
        if encoding == "learned":  # as long as the longest evaluation; rows ≥ train_length are never trained
            self.positions = nn.Embedding(max(config.eval_length, config.extension_factor * config.train_length), d)
            nn.init.normal_(self.positions.weight, std=0.02)
        if encoding == "t5":  # one learned scalar per (bucket, head), shared by all layers as in T5
            self.t5_bias = nn.Embedding(config.t5_buckets, h)

    def forward(self, tokens: torch.Tensor, rope_scaling: dict | None = None) -> torch.Tensor:
        length, device = tokens.shape[1], tokens.device
        x = self.tokens(tokens)
        positions = torch.arange(length, device=device)
        if self.encoding == "learned":
            x = x + self.positions(positions)
        elif self.encoding == "sinusoidal":
            x = x + sinusoidal(length, self.config.d_model, dtype=x.dtype, device=device)
        mask, rope = self._mask(length, device), None
        if self.encoding == "rope":
            freqs = rope_frequencies(
                self.config.d_model // self.config.n_heads,
                rope_scaling=rope_scaling,
                max_position_embeddings=self.config.train_length,
                device=device,
            )
            rope = (positions, freqs.inv_freq, freqs.attention_factor)
        for block in self.blocks:
            x = block(x, mask, rope)
        return self.head(self.ln_f(x))

    def _mask(self, length: int, device: torch.device) -> torch.Tensor | None:
        """The additive (H, L, L) bias with −inf on future keys, or None for a plain causal mask."""
        if self.encoding == "alibi":
            return alibi_bias(self.config.n_heads, length, device=device).to(torch.float32)
        if self.encoding == "t5":
            rel = torch.arange(length, device=device)[None, :] - torch.arange(length, device=device)[:, None]
            buckets = t5_relative_bucket(
                rel, bidirectional=False, num_buckets=self.config.t5_buckets, max_distance=self.config.t5_max_distance
            )
            bias = self.t5_bias(buckets).permute(2, 0, 1)  # (H, L, L)
            return bias.masked_fill(rel > 0, float("-inf"))
        return None


# --- training and evaluation ------------------------------------------------------------------------------------

Progress = Callable[[float, str], bool]  # (fraction done, message) -> keep going?


def run_lab(config: LabConfig, *, device: str | None = None, progress: Progress | None = None) -> dict:
    """Train one model per encoding, evaluate each per position, return everything as plain JSON-able data."""
    dev = pick_device(device)
    torch.set_num_threads(max(1, torch.get_num_threads()))
    started = time.perf_counter()
    results: dict = {"config": dataclasses.asdict(config), "device": str(dev), "torch": torch.__version__}
    results["optimal_loss"] = optimal_loss(config, config.eval_length).tolist()
    eval_data = sample_batch(
        config, config.eval_length, config.eval_sequences, torch.Generator().manual_seed(10_000 + config.seed)
    )
    total = len(config.encodings) * config.steps
    runs = {}
    for n, encoding in enumerate(config.encodings):
        model, stats = _train(config, encoding, dev, progress, done=n * config.steps, total=total)
        stats.update(_evaluate(model, eval_data.to(dev), None))
        if encoding == "rope":
            ext_length = config.extension_factor * config.train_length
            stats["extension"] = {
                str(kind): _evaluate(model, eval_data[:, :ext_length].to(dev), kind) for kind in EXTENSIONS
            }
        runs[encoding] = stats
    results["runs"] = runs
    results["seconds"] = time.perf_counter() - started
    return results


def _train(config: LabConfig, encoding: str, device: torch.device, progress: Progress | None, *, done: int, total: int):
    torch.manual_seed(config.seed)
    model = TinyLM(config, encoding).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)  # no weight decay: untrained rows stay as they are
    generator = torch.Generator().manual_seed(config.seed)  # the same batches for every encoding
    losses, started = [], time.perf_counter()
    for step in range(config.steps):
        lr = config.lr * min(1.0, (step + 1) / 30) * 0.5 * (1 + math.cos(math.pi * step / config.steps))
        for group in optimizer.param_groups:
            group["lr"] = lr  # 30-step warm-up, then cosine decay
        tokens = sample_batch(config, config.train_length, config.batch_size, generator).to(device)
        logits = model(tokens[:, :-1])
        loss = F.cross_entropy(logits.reshape(-1, config.vocab_size), tokens[:, 1:].reshape(-1))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        if progress is not None and not progress(
            (done + step + 1) / total, f"{encoding}: step {step + 1}/{config.steps}"
        ):
            raise LabCancelled(f"cancelled while training {encoding}")
    seconds = time.perf_counter() - started
    tokens_per_s = config.steps * config.batch_size * (config.train_length - 1) / seconds
    return model, {
        "train_loss": losses[:: max(1, config.steps // 100)],
        "train_seconds": seconds,
        "tokens_per_second": tokens_per_s,
    }


@torch.no_grad()
def _evaluate(model: TinyLM, tokens: torch.Tensor, rope_type: str | None) -> dict:
    """Per-position loss (nats) and accuracy of predicting token t + 1 from tokens 0 … t."""
    model.eval()
    scaling = None
    if rope_type is not None:
        scaling = {"rope_type": rope_type, "factor": float(model.config.extension_factor)}
        if rope_type == "yarn":
            scaling["original_max_position_embeddings"] = model.config.train_length
    logits = model(tokens[:, :-1], rope_scaling=scaling)
    target = tokens[:, 1:]
    loss = F.cross_entropy(logits.transpose(1, 2), target, reduction="none").mean(0)  # (L − 1,)
    accuracy = (logits.argmax(-1) == target).float().mean(0)
    model.train()
    return {"loss": loss.cpu().tolist(), "accuracy": accuracy.cpu().tolist()}


# --- command line -----------------------------------------------------------------------------------------------


class _Bar:
    """A text progress bar on stderr: redrawn in place on a terminal, one line per 10 % otherwise (CI logs)."""

    def __init__(self) -> None:
        self.shown = -1
        self.tty = sys.stderr.isatty()

    def __call__(self, fraction: float, message: str) -> bool:
        step = int(100 * fraction) if self.tty else 10 * int(10 * fraction)
        if step != self.shown:
            self.shown = step
            filled = int(30 * fraction)
            end = "" if self.tty else "\n"
            sys.stderr.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {step:3d}%  {message:<32}{end}")
            sys.stderr.flush()
        return True


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Train tiny Transformers per position encoding; test past L_train.")
    parser.add_argument("--out", required=True, help="where to write the results (JSON)")
    parser.add_argument("--preset", choices=sorted(PRESETS), default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, help="override the preset's training steps")
    parser.add_argument("--device", choices=("cuda", "mps", "cpu"), help="default: CUDA, then MPS, then CPU")
    args = parser.parse_args(argv)
    overrides = {"seed": args.seed} | ({"steps": args.steps} if args.steps else {})
    config = dataclasses.replace(PRESETS[args.preset], **overrides)
    results = run_lab(config, device=args.device, progress=_Bar())
    results["command"] = "python -m posenc_core.torch_backend.lab " + " ".join(sys.argv[1:] if argv is None else argv)
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(results, f)
    sys.stderr.write(f"\nwrote {args.out} in {results['seconds']:.1f} s on {results['device']}\n")


if __name__ == "__main__":
    main()
