"""vLLM's own count of the prompt tokens it computed and took from its prefix cache.

docs/judgments.md, "What the engines compute".
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import httpx

from argassets.platform.judging.prefill_meter import PrefillCounts

__all__ = ["offline_prefill_counts", "prometheus_prefill_counts", "server_prefill_counts"]

_BY_SOURCE = "vllm:prompt_tokens_by_source"
_QUERIES, _HITS = "vllm:prefix_cache_queries", "vllm:prefix_cache_hits"
_SAMPLE = re.compile(r"^(?P<name>[a-zA-Z_:][\w:]*)(?:\{(?P<labels>[^}]*)\})?\s+(?P<value>\S+)")
_LABEL = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')


def _counts(samples: Iterable[tuple[str, dict[str, str], float]], source: str) -> PrefillCounts | None:
    """Sum the counters over engines; ``None`` when vLLM published none of them."""
    totals: dict[str, float] = {}
    for name, labels, value in samples:
        key = f"{name}:{labels.get('source', '')}" if name == _BY_SOURCE else name
        totals[key] = totals.get(key, 0.0) + value
    computed, reused = totals.get(f"{_BY_SOURCE}:local_compute"), totals.get(f"{_BY_SOURCE}:local_cache_hit")
    if computed is not None and reused is not None:
        return PrefillCounts(int(computed), int(reused), f"{source}: {_BY_SOURCE}")
    if _QUERIES in totals and _HITS in totals:
        hits = totals[_HITS]
        return PrefillCounts(int(totals[_QUERIES] - hits), int(hits), f"{source}: {_QUERIES} - {_HITS}")
    return None


def offline_prefill_counts(llm: Any) -> PrefillCounts | None:
    """The counters of an offline ``vllm.LLM`` (``None`` when it was built without stats)."""
    try:
        metrics = llm.get_metrics()
    except (AssertionError, AttributeError):  # stats logging off, or a vLLM without get_metrics
        return None
    samples = (
        (m.name, dict(m.labels), float(m.value))
        for m in metrics
        if m.name in (_BY_SOURCE, _QUERIES, _HITS) and hasattr(m, "value")
    )
    return _counts(samples, "vLLM get_metrics()")


def prometheus_prefill_counts(text: str) -> PrefillCounts | None:
    """The counters in a Prometheus text exposition (``vllm serve``'s ``/metrics``)."""
    samples = []
    for line in text.splitlines():
        match = _SAMPLE.match(line)
        if match is None or line.startswith("#"):
            continue
        name = match["name"].removesuffix("_total")
        if name not in (_BY_SOURCE, _QUERIES, _HITS) or match["name"] == name:
            continue
        labels = dict(_LABEL.findall(match["labels"] or ""))
        samples.append((name, labels, float(match["value"])))
    return _counts(samples, "vllm serve /metrics")


def server_prefill_counts(base_url: str, timeout_s: float = 10.0) -> PrefillCounts | None:
    """The counters of a ``vllm serve`` at ``base_url`` (``http://host:port/v1``), or ``None``.

    The server's counters cover every client it served: take differences around one's own work.
    """
    root = base_url.rstrip("/").removesuffix("/v1")
    try:
        reply = httpx.get(f"{root}/metrics", timeout=timeout_s)
    except httpx.HTTPError:
        return None
    return prometheus_prefill_counts(reply.text) if reply.status_code == 200 else None
