"""What to run when something is missing, and about how long it takes: one place for every message.

Each figure was measured, and says on which machine; docs/operations.md keeps the measurements.
"""

from __future__ import annotations

#: run-default from nothing (a new home, DuckDB file and judgment cache; the embedding cache as
#: scripts/install leaves it). The figures: README, docs/operations.md.
RUN_DEFAULT = (
    "`argassets run-default` (about 4 minutes from nothing: 3 min 55 s on a quiet 2-core AMD EPYC with "
    "AVX2; plus about 4.5 minutes once per machine for the knowledge base's embeddings when scripts/install "
    "did not embed them, which every later home reuses from ~/.cache/argassets)"
)


def missing(what: str, remedy: str = RUN_DEFAULT) -> str:
    """``<what> is missing: run <remedy>``, the one wording of every such message."""
    return f"{what}: run {remedy}"
