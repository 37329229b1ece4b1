"""Study items matched to knowledge-base arguments by their text."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

import pandas as pd

_QUOTES = str.maketrans({c: "'" for c in '"\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u2032\u2033`\u00b4'})
_DASHES = str.maketrans({c: "-" for c in "\u2010\u2011\u2012\u2013\u2014\u2015\u2212"})
# str.translate walks every character; most texts hold none of these, which a regex finds faster.
_ANY_QUOTE = re.compile("[" + re.escape("".join(map(chr, _QUOTES))) + "]")
_ANY_DASH = re.compile("[" + re.escape("".join(map(chr, _DASHES))) + "]")


def normalise_text(text: object) -> str:
    """The text key used to match study items to KB arguments.

    NFKC (which also turns ``…`` into ``...``), one kind of quote and of dash, whitespace
    collapsed, case folded. Punctuation and words are otherwise kept: it matches the same text
    typed differently, never a different text.
    """
    if not isinstance(text, str):
        return ""
    value = unicodedata.normalize("NFKC", text)
    if _ANY_QUOTE.search(value):
        value = value.translate(_QUOTES)
    if _ANY_DASH.search(value):
        value = value.translate(_DASHES)
    return " ".join(value.split()).casefold()


def _strip_speaker(locution: str, speaker: str | None) -> str:
    """Drop a leading ``Speaker :`` that a study file left on its locution."""
    if speaker and isinstance(locution, str):
        match = re.match(rf"^\s*{re.escape(speaker.strip())}\s*:\s*", locution)
        if match:
            return locution[match.end() :]
    return locution


MATCH_COLUMNS = ["study", "meta_id", "argument_id", "match", "n_candidates", "published_index"]


@dataclass
class _TextIndex:
    """KB argument ids (in ``argument_id`` order) by exact and normalised text, for
    :func:`match_study_items`."""

    exact: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    normal: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    by_prop: dict[str, list[str]] = field(default_factory=dict)
    by_loc: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, arguments: pd.DataFrame) -> _TextIndex:
        kb = arguments[["argument_id", "locution", "proposition"]].copy()
        kb["argument_id"] = kb["argument_id"].astype(str)
        kb = kb.sort_values("argument_id", kind="stable")
        index = cls()
        for argument_id, locution, proposition in zip(
            kb["argument_id"], kb["locution"], kb["proposition"], strict=True
        ):
            index.exact.setdefault((locution, proposition), []).append(argument_id)
            nl, np_ = normalise_text(locution), normalise_text(proposition)
            index.normal.setdefault((nl, np_), []).append(argument_id)
            index.by_prop.setdefault(np_, []).append(argument_id)
            index.by_loc.setdefault(nl, []).append(argument_id)
        return index

    def match(self, locution: str, proposition: str, speaker: str | None) -> tuple[str | None, str, int]:
        """``(argument_id, how, n_candidates)`` of one study item (see :func:`match_study_items`)."""
        found = self.exact.get((locution, proposition))
        if found:
            return found[0], "exact", len(found)
        nl = normalise_text(_strip_speaker(locution, speaker))
        np_ = normalise_text(proposition)
        found = self.normal.get((nl, np_))
        if found:
            return found[0], "normalised", len(found)
        found = self.by_prop.get(np_)
        if np_ and found and len(set(found)) == 1:
            return found[0], "proposition", 1
        found = self.by_loc.get(nl)
        if nl and found and len(set(found)) == 1:
            return found[0], "locution", 1
        return None, "unmatched", 0


def match_study_items(
    arguments: pd.DataFrame,
    pointwise_items: pd.DataFrame | None = None,
    pairwise_items: pd.DataFrame | None = None,
) -> pd.DataFrame:
    """Join the study items to knowledge-base arguments through their text.

    The studies use their own ids (``meta_id``), so an item is matched by its locution and
    proposition, tried in this order (``match`` column):

    1. ``exact``: the same locution and proposition strings;
    2. ``normalised``: equal after :func:`normalise_text`, with a leading ``Speaker :`` removed
       from the study's locution (pairwise items name their speaker);
    3. ``proposition``: the normalised proposition alone, when exactly one KB argument has it;
    4. ``locution``: the normalised locution alone, when exactly one KB argument has it;
    5. ``unmatched``: ``argument_id`` is null and the item is listed as such.

    When several KB arguments carry the same text (QT30 repeats some nodesets), the first by
    ``argument_id`` is taken and ``n_candidates`` says how many there were: they hold the same
    prompt, so the platform's predictions for them agree up to sampling.

    Parameters
    ----------
    arguments
        ``political_kb_arguments`` (``argument_id``, ``locution``, ``proposition``).
    pointwise_items, pairwise_items
        :class:`PointwiseStudy` and :class:`PairwiseStudy` ``items``.

    Returns
    -------
    pandas.DataFrame
        ``study``, ``meta_id``, ``argument_id``, ``match``, ``n_candidates``, ``published_index``
        (pairwise ``prediction_index``, else null), pairwise items first.
    """
    texts = _TextIndex.of(arguments)
    rows: list[tuple[str, str, str | None, str, int, int | None]] = []
    if pairwise_items is not None:
        for meta_id, locution, proposition, speaker, index in zip(
            pairwise_items["meta_id"],
            pairwise_items["locution"],
            pairwise_items["proposition"],
            pairwise_items["speaker"],
            pairwise_items["prediction_index"],
            strict=True,
        ):
            argument_id, how, n = texts.match(locution, proposition, speaker)
            rows.append(("pairwise", meta_id, argument_id, how, n, int(index)))
    if pointwise_items is not None:
        for meta_id, locution, proposition in zip(
            pointwise_items["meta_id"], pointwise_items["locution"], pointwise_items["proposition"], strict=True
        ):
            argument_id, how, n = texts.match(locution, proposition, None)
            rows.append(("pointwise", meta_id, argument_id, how, n, None))
    out = pd.DataFrame(rows, columns=MATCH_COLUMNS)
    out["n_candidates"] = out["n_candidates"].astype("int64")
    out["published_index"] = pd.array(out["published_index"].tolist(), dtype="Int64")
    return out
