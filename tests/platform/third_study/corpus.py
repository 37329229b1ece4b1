"""A synthetic persuasion corpus: a few topics of texts of known strength, and expert labels.

A text's hidden ``strength`` is its index in its topic, and the experts judge every pair of a topic
by it (the stronger text wins: their Bradley-Terry scores order the texts by strength). Length
follows strength except that texts 1 and 2 of each topic swap lengths (text 1 is longer but
weaker), so a judge preferring the longer text agrees with the experts on every pair of a topic but
that one: a share of ``1 - 1 / C(TEXTS_PER_TOPIC, 2)``.
"""

from __future__ import annotations

from itertools import combinations
from math import comb

import pandas as pd

TOPICS = (1, 2, 3)
TEXTS_PER_TOPIC = 5
#: Length rank of the text of each strength: texts 1 and 2 swap.
LENGTH_RANK = (0, 2, 1, 3, 4)
#: The share of pairs on which the experts prefer the longer text (one pair per topic disagrees).
EXPERTS_PREFER_LONGER = 1 - 1 / comb(TEXTS_PER_TOPIC, 2)


def _text(topic: int, strength: int) -> str:
    words = 3 + 4 * LENGTH_RANK[strength] + topic  # distinct lengths within a topic
    return " ".join(f"t{topic}w{w}" for w in range(words))


def synthetic_texts() -> pd.DataFrame:
    """One row per text: ``topic_id``, ``text_id``, ``text``, ``words`` and its known ``strength``."""
    rows = [
        (topic, f"t{topic}-{i}", _text(topic, i), len(_text(topic, i).split()), i)
        for topic in TOPICS
        for i in range(TEXTS_PER_TOPIC)
    ]
    return pd.DataFrame(rows, columns=["topic_id", "text_id", "text", "words", "strength"])


def synthetic_pairs(texts: pd.DataFrame) -> pd.DataFrame:
    """Every pair of texts within a topic, with the experts' label (``A`` or ``B``: the stronger text).

    Item A is the weaker text on even pairs and the stronger on odd ones, so neither position wins.
    """
    rows = []
    for topic, group in texts.groupby("topic_id", sort=True):
        ordered = group.sort_values("strength").to_dict("records")
        for n, (weak, strong) in enumerate(combinations(ordered, 2)):
            first, second = (weak, strong) if n % 2 == 0 else (strong, weak)
            label = "A" if first["strength"] > second["strength"] else "B"
            rows.append((f"p{topic}-{n:02d}", int(topic), first["text_id"], second["text_id"], label))
    return pd.DataFrame(rows, columns=["pair_id", "topic_id", "text_id_a", "text_id_b", "expert_label"])
