"""How many prompt tokens an engine must compute, at least, for a set of prompts sent in some order.

docs/judgments.md, "Prefix order and the prefill floor".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from argassets.platform.judging.prompt_token_ids import TokenizedPrompts

__all__ = ["PromptPrefixes", "ReuseModel", "prefill_tokens"]


@dataclass(frozen=True)
class ReuseModel:
    """How an engine reuses the prompt tokens it computed before (see the module docstring)."""

    kind: Literal["blocks", "previous_prompt", "none"]
    block: int = 1

    def __post_init__(self) -> None:
        if self.block < 1:
            raise ValueError(f"block must be >= 1, got {self.block}")

    def describe(self) -> str:
        if self.kind == "blocks":
            return f"prefix cache keeping every block of {self.block} tokens"
        if self.kind == "previous_prompt":
            return "only the previous prompt's prefix"
        return "no reuse"


def _sequence_lcp(a: np.ndarray, b: np.ndarray) -> int:
    n = min(len(a), len(b))
    differ = np.flatnonzero(a[:n] != b[:n])
    return int(differ[0]) if len(differ) else n


def _ranks(arrays: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Dense lexicographic rank of each array (equal arrays, equal rank), and for each rank the LCP
    of its array with the one of the rank before."""
    keys = [a.astype(">u4").tobytes() for a in arrays]
    distinct = sorted(set(keys))
    where = {key: position for position, key in enumerate(distinct)}
    rank = np.array([where[key] for key in keys], dtype=np.int64)
    first: dict[int, int] = {}
    for index, key in enumerate(keys):
        first.setdefault(where[key], index)
    neighbour = np.zeros(len(distinct), dtype=np.int64)
    for position in range(1, len(distinct)):
        neighbour[position] = _sequence_lcp(arrays[first[position - 1]], arrays[first[position]])
    return rank, neighbour


class _RangeMin:
    """Minimum of ``values[lo..hi]`` (inclusive) for arrays of bounds, from a sparse table."""

    def __init__(self, values: np.ndarray):
        self.levels = [values.astype(np.int64)]
        width = 1
        while 2 * width <= len(values):
            last = self.levels[-1]
            self.levels.append(np.minimum(last[:-width], last[width:]))
            width *= 2

    def __call__(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        span = hi - lo + 1
        level = np.floor(np.log2(np.maximum(span, 1))).astype(np.int64)
        out = np.empty(len(lo), dtype=np.int64)
        for k in np.unique(level):
            pick = level == k
            table = self.levels[int(k)]
            out[pick] = np.minimum(table[lo[pick]], table[hi[pick] - (1 << int(k)) + 1])
        return out


class PromptPrefixes:
    """The prompts sorted by token ids, with what answers "how long a prefix do prompts i and j share"."""

    def __init__(self, prompts: TokenizedPrompts):
        self.lengths = prompts.lengths
        heads, tails = prompts.heads, prompts.tails
        head_rank, _ = _ranks(heads)
        tail_rank, tail_neighbour = _ranks(tails)
        head, tail = prompts.pairs[:, 0], prompts.pairs[:, 1]
        if self._head_is_a_proper_prefix(heads):
            raise ValueError("a prompt head is a proper prefix of another: tokenize the prompts whole")
        self.sorted = np.lexsort((tail_rank[tail], head_rank[head]))
        self.rank = np.empty(len(self.sorted), dtype=np.int64)
        self.rank[self.sorted] = np.arange(len(self.sorted))
        # LCP of sorted neighbours: same head -> head + LCP of the tails (a range minimum over the
        # tails' own sorted neighbours); other heads -> LCP of the heads.
        tail_min = _RangeMin(tail_neighbour) if len(tails) else None
        neighbour = np.zeros(len(self.sorted), dtype=np.int64)
        if len(self.sorted) > 1:
            before, after = self.sorted[:-1], self.sorted[1:]
            same_head = head_rank[head[before]] == head_rank[head[after]]
            head_len = np.array([len(h) for h in heads], dtype=np.int64)
            ra, rb = tail_rank[tail[before]], tail_rank[tail[after]]
            same_tail = ra == rb
            tail_lcp = np.zeros(len(before), dtype=np.int64)
            differ = same_head & ~same_tail
            if differ.any() and tail_min is not None:
                lo, hi = np.minimum(ra, rb)[differ] + 1, np.maximum(ra, rb)[differ]
                tail_lcp[differ] = tail_min(lo, hi)
            lcp = np.where(same_tail, self.lengths[after], head_len[head[after]] + tail_lcp)
            other = ~same_head
            lcp[other] = [
                _sequence_lcp(heads[a], heads[b]) for a, b in zip(head[before][other], head[after][other], strict=True)
            ]
            neighbour[1:] = lcp
        self._neighbour_min = _RangeMin(neighbour)

    @staticmethod
    def _head_is_a_proper_prefix(heads: list[np.ndarray]) -> bool:
        keys = sorted(h.astype(">u4").tobytes() for h in heads)
        return any(b.startswith(a) and len(b) > len(a) for a, b in zip(keys, keys[1:], strict=False))

    def lcp(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Longest common prefix, in tokens, of prompts ``a[k]`` and ``b[k]`` (arrays of indices)."""
        ra, rb = self.rank[a], self.rank[b]
        lo, hi = np.minimum(ra, rb), np.maximum(ra, rb)
        out = self.lengths[a].copy()
        apart = lo != hi
        if apart.any():
            out[apart] = self._neighbour_min(lo[apart] + 1, hi[apart])
        return out

    def longest_earlier(self, order: np.ndarray) -> np.ndarray:
        """Per position of ``order``: the longest prefix its prompt shares with any prompt sent before it."""
        time = np.empty(len(self.sorted), dtype=np.int64)
        time[self.rank[order]] = np.arange(len(order))
        present = np.zeros(len(self.sorted), dtype=bool)
        present[self.rank[order]] = True
        by_rank = np.flatnonzero(present)
        times = time[by_rank]
        left = _nearest_earlier(times)
        right = _nearest_earlier(times[::-1])[::-1]
        right = np.where(right >= 0, len(times) - 1 - right, -1)
        best = np.zeros(len(by_rank), dtype=np.int64)
        prompts = self.sorted[by_rank]
        for other in (left, right):
            has = other >= 0
            best[has] = np.maximum(best[has], self.lcp(prompts[has], self.sorted[by_rank[other[has]]]))
        out = np.empty(len(order), dtype=np.int64)
        out[times] = best
        return out


def _nearest_earlier(times: np.ndarray) -> np.ndarray:
    """For each position, the nearest position to its left holding a smaller value (-1: none)."""
    out = np.full(len(times), -1, dtype=np.int64)
    stack: list[int] = []
    values = times.tolist()
    for position, value in enumerate(values):
        while stack and values[stack[-1]] > value:
            stack.pop()
        if stack:
            out[position] = stack[-1]
        stack.append(position)
    return out


def prefill_tokens(prefixes: PromptPrefixes, order: np.ndarray, model: ReuseModel, copies: int | np.ndarray = 1) -> int:
    """Prompt tokens computed when the prompts ``order`` (indices) are sent in that order.

    ``copies``: sequences per prompt (a number, or one per position of ``order``): vLLM's ``n``
    samples are requests of their own; llama.cpp's batch judge decodes a prompt once for all its
    runs, so there ``copies`` changes nothing. An index listed twice is a prompt sent again.
    """
    order = np.asarray(order, dtype=np.int64)
    extra = np.broadcast_to(np.asarray(copies, dtype=np.int64), order.shape) - 1
    if (extra < 0).any():
        raise ValueError("copies must be >= 1")
    n = prefixes.lengths[order]
    if model.kind == "none":
        return int((n * (extra + 1)).sum())
    if model.kind == "previous_prompt":
        shared = np.zeros(len(order), dtype=np.int64)
        if len(order) > 1:
            shared[1:] = prefixes.lcp(order[:-1], order[1:])
        return int((n - np.minimum(shared, n - 1)).sum())
    block = model.block
    reusable = (n - 1) // block  # whole blocks before the last token
    first = np.zeros(len(order), dtype=bool)
    first[np.unique(order, return_index=True)[1]] = True
    earlier = n.copy()  # a prompt sent again shares all of itself with its first sending
    earlier[first] = prefixes.longest_earlier(order[first])
    hits = np.minimum(earlier // block, reusable)
    return int((n - block * hits).sum() + (extra * (n - block * reusable)).sum())
