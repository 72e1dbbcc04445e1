r"""The lab's batches, one maker per task, made on the training device in bulk: lag-copy sequences, passkey
retrievals and byte-level text windows (the tasks are described in :mod:`posenc_lab.tasks`, whose registry names the
maker of each: :attr:`posenc_lab.tasks.Task.batches`)."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from .corpus import text_corpus

__all__ = ["Batches", "LagBatches", "RetrievalBatches", "TextBatches"]


class Batches:
    r"""Batches of one task for one seed, drawn on ``device`` from its own generator (so every encoding sees the same
    batches). ``batch(n, length)`` gives training sequences; the evaluation sets are fixed by the seed: a task scored
    by position has ``evaluation(length)``, one scored by distance ``at_distance(distance)``. ``config`` is a
    :class:`posenc_lab.tasks.LabConfig`."""

    def __init__(self, config: Any, device: torch.device) -> None:
        self.config, self.device = config, device
        self.generator = torch.Generator(device=device).manual_seed(config.seed)

    def batch(self, n: int, length: int, generator: torch.Generator | None = None) -> torch.Tensor:
        r"""(n, length) int64 training tokens."""
        return self._batch(n, length, generator or self.generator)

    def _batch(self, n: int, length: int, generator: torch.Generator) -> torch.Tensor:
        raise NotImplementedError


class LagBatches(Batches):
    r"""The lag task: x_t = π(x_{t−lag}), except with probability ε, when it is uniform."""

    def __init__(self, config: Any, device: torch.device) -> None:
        super().__init__(config, device)
        # π and its powers: π^k(v) for k = 0 … ⌈L_max / lag⌉ (a token k copies down its chain is π^k of its start)
        perm = torch.randperm(config.vocab_size, generator=torch.Generator().manual_seed(config.seed))
        steps = -(-max(config.eval_length, config.extension_factor * config.train_length) // config.lag) + 1
        powers = [torch.arange(config.vocab_size)]
        for _ in range(steps):
            powers.append(perm[powers[-1]])
        self.powers = torch.stack(powers).to(device)  # (K, V)

    def evaluation(self, length: int) -> torch.Tensor:
        r"""The fixed evaluation set (eval_sequences, length)."""
        generator = torch.Generator(device=self.device).manual_seed(10_000 + self.config.seed)
        return self._batch(self.config.eval_sequences, length, generator)

    def _batch(self, n: int, length: int, generator: torch.Generator) -> torch.Tensor:
        v, lag = self.config.vocab_size, self.config.lag
        fresh = torch.randint(v, (n, length), generator=generator, device=self.device)
        keep = torch.rand((n, length), generator=generator, device=self.device) >= self.config.noise
        # Position t = r + lag·j sits on chain r at link j. Link j is fresh where noise struck (or j = 0); otherwise
        # it is π of link j − 1, so it equals π^(j − s)(fresh_s), s the last fresh link at or before j.
        t = torch.arange(length, device=self.device)
        link = t // lag
        restart = ~keep | (t < lag)
        last_fresh = _cummax_along_chains(torch.where(restart, t, 0), lag)  # (n, L): the chain's last restart
        return self.powers[link - last_fresh.div(lag, rounding_mode="floor"), fresh.gather(1, last_fresh)]


class RetrievalBatches(Batches):
    r"""The retrieval task: a value planted in filler, a query token second to last, the value last."""

    def _batch(self, n: int, length: int, generator: torch.Generator) -> torch.Tensor:
        r"""The value anywhere before the query."""
        value_at = torch.randint(length - 2, (n,), generator=generator, device=self.device)
        return self._retrieval(n, length, value_at, generator)

    def at_distance(self, distance: int) -> torch.Tensor:
        r"""(n, distance + 2): the value at position 0, the query ``distance`` later, then the answer.

        n is ``eval_sequences`` up to 4 L, then falls as 1/distance to no fewer than 8: attention with a bias costs
        n·L² (ALiBi's and T5's masks take PyTorch's plain path on a CPU: 13 s for 64 sequences of 1024 tokens), and
        a band beyond 4 L still pools about 40 sequences per seed over its distances.
        """
        generator = torch.Generator(device=self.device).manual_seed(20_000 + 7919 * self.config.seed + distance)
        config = self.config
        n = max(8, min(config.eval_sequences, config.eval_sequences * 4 * config.train_length // distance))
        return self._retrieval(n, distance + 2, torch.zeros(n, dtype=torch.int64, device=self.device), generator)

    def _retrieval(self, n: int, length: int, value_at: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
        v = self.config.vocab_size
        tokens = torch.randint(v, (n, length), generator=generator, device=self.device)  # filler 0 … V − 1
        values = v + 1 + torch.randint(v, (n,), generator=generator, device=self.device)  # values V + 1 … 2V
        rows = torch.arange(n, device=self.device)
        tokens[rows, value_at] = values
        tokens[:, length - 2] = v  # the query token
        tokens[:, length - 1] = values
        return tokens


class TextBatches(Batches):
    r"""The text task: windows of bytes, from the training text and, for evaluation, from the held-out text."""

    def __init__(self, config: Any, device: torch.device) -> None:
        super().__init__(config, device)
        corpus = text_corpus()
        self.train_bytes = torch.from_numpy(corpus.train.copy()).to(device)
        self.held_out_bytes = torch.from_numpy(corpus.held_out.copy()).to(device)

    def _batch(self, n: int, length: int, generator: torch.Generator) -> torch.Tensor:
        starts = torch.randint(self.train_bytes.numel() - length, (n, 1), generator=generator, device=self.device)
        return self.train_bytes[starts + torch.arange(length, device=self.device)].long()

    def evaluation(self, length: int) -> torch.Tensor:
        r"""4 × ``eval_sequences`` evenly spaced held-out windows: one byte's loss varies far more than one lag-copy
        token's (8 × cost the CPU preset 30 s a seed, mostly ALiBi's and T5's masked attention)."""
        n = self.config.eval_sequences
        starts = torch.linspace(0, self.held_out_bytes.numel() - length - 1, 4 * n, device=self.device).long()
        return self.held_out_bytes[starts[:, None] + torch.arange(length, device=self.device)].long()


def _cummax_along_chains(x: torch.Tensor, lag: int) -> torch.Tensor:
    r"""Running maximum of ``x`` (n, L) along each chain of positions r, r + lag, r + 2·lag, …"""
    n, length = x.shape
    padded = F.pad(x, (0, (-length) % lag), value=0).view(n, -1, lag)  # (n, links, lag): column r is chain r
    return padded.cummax(dim=1).values.view(n, -1)[:, :length]
