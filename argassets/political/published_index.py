"""The released prompts of the political study, and the map from published rows to KB arguments.

``political/prompts/prompts.jsonl.xz`` holds the 23,300 prompts the paper's models received, one JSON
object a line: ``id`` (the ``nodeID`` of every published prediction file) and ``messages`` (system
and user, byte for byte). The user message carries the row's proposition and locution, so every
published row can be joined to an argument of this platform's knowledge base by its text.

The paper's pipeline wrote the texts into the prompt with every double quote and curly quote
(``"``, ``“``, ``”``, ``‘``, ``’``) turned into a straight apostrophe (:data:`PROMPT_QUOTES`); the
platform's prompt does the same (:func:`argassets.political.prompts.prompt_text`), so a row's released
messages and the platform's messages for its argument are equal strings.

Rows and arguments (:func:`build_published_index`):

- a row **matches** the KB arguments whose prompt text (proposition and locution as sent) equals
  the row's (rule ``exact``); failing that, those equal after :func:`normalise_text` (rule
  ``normalised``: same words, typed differently, so the platform's prompt differs from the one
  sent); otherwise the row is ``unmatched`` and its reason is given;
- several arguments can share one prompt text (``n_candidates``: the same words said twice); the
  model saw one prompt, so each of them carries that prompt's answers;
- several rows can share one prompt text (``n_rows``): the paper's KB lists a proposition once per
  nodeset file, so the cross-segment "glue" nodesets repeat it, and each repeat was sent again.
  **The first row (lowest ``nodeID``) stands for the text** (``representative``); the repeats are
  kept in the index, not pooled. Pooling would give those arguments 10 or more repetitions instead
  of the protocol's 5 (changing the denominator of the probability of NA and the counts of the E3
  rule), and their positions would then appear in no released file; with the first row, every
  position of the KB is one published row, which the released ensemble files confirm row for row.
"""

from __future__ import annotations

import json
import lzma
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from argassets.political.model_stats import scores_from_json
from argassets.political.prompts import prompt_text, split_user_message
from argassets.political.study_items import normalise_text

__all__ = [
    "INDEX_COLUMNS",
    "RELEASED_PROMPTS",
    "RELEASED_ENSEMBLES",
    "argument_published_rows",
    "build_published_index",
    "compare_with_released",
    "read_released_prompts",
]

#: The released prompts, below the published-data folder.
RELEASED_PROMPTS = "political/prompts/prompts.jsonl.xz"
#: The released ensemble files (E1's was never released), below the published-data folder.
RELEASED_ENSEMBLES: dict[str, str] = {
    "E2": "political/ensembles/ensemble2.tsv",
    "E3": "political/ensembles/ensemble3.tsv",
}

PROMPT_COLUMNS = ["node_id", "system", "user", "proposition", "locution"]
INDEX_COLUMNS = [
    "node_id",
    "argument_id",
    "match",
    "n_candidates",
    "n_rows",
    "representative",
    "representative_node_id",
    "reason",
    "proposition",
    "locution",
]


def read_released_prompts(path: str | Path) -> pd.DataFrame:
    """Read ``prompts.jsonl.xz`` (or an uncompressed ``.jsonl``).

    Returns
    -------
    pandas.DataFrame
        ``node_id`` (int), ``system``, ``user`` (the messages as sent), ``proposition`` and
        ``locution`` (read back from the user message), sorted by ``node_id``.

    Raises
    ------
    ValueError
        A line that is not JSON, lacks ``id`` or the two messages, repeats an ``id``, or whose user
        message is not the protocol's; the message names the file, the line and the id.
    """
    path = Path(path)
    opener = lzma.open if path.suffix == ".xz" else open
    rows = []
    seen: set[int] = set()
    try:
        with opener(path, "rt", encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                where = f"{path}: line {number}"
                try:
                    record = json.loads(line)
                except ValueError as exc:
                    raise ValueError(f"{where}: not JSON ({exc})") from None
                if not isinstance(record, dict) or "id" not in record or "messages" not in record:
                    raise ValueError(f"{where}: expected an object with 'id' and 'messages'")
                try:
                    node_id = int(record["id"])
                except (TypeError, ValueError):
                    raise ValueError(f"{where}: id {record['id']!r} is not an integer") from None
                where = f"{where} (id {node_id})"
                if node_id in seen:
                    raise ValueError(f"{where}: id occurs twice")
                seen.add(node_id)
                messages = record["messages"]
                roles = (
                    [m.get("role") for m in messages]
                    if isinstance(messages, list) and all(isinstance(m, dict) for m in messages)
                    else None
                )
                if roles != ["system", "user"]:
                    raise ValueError(f"{where}: expected a system and a user message, found roles {roles}")
                system, user = (str(m.get("content", "")) for m in messages)
                try:
                    proposition, locution = split_user_message(user)
                except ValueError as exc:
                    raise ValueError(f"{where}: {exc}") from None
                rows.append((node_id, system, user, proposition, locution))
    except (OSError, lzma.LZMAError, EOFError) as exc:
        raise ValueError(f"{path}: cannot read ({exc})") from None
    if not rows:
        raise ValueError(f"{path}: no prompts")
    frame = pd.DataFrame(rows, columns=PROMPT_COLUMNS)
    return frame.sort_values("node_id", kind="stable").reset_index(drop=True)


def _prompt_keys(arguments: pd.DataFrame) -> list[tuple[str, str]]:
    return [
        (prompt_text(proposition), prompt_text(locution))
        for proposition, locution in zip(
            arguments["proposition"].astype(str), arguments["locution"].astype(str), strict=True
        )
    ]


@dataclass
class _KbTexts:
    """The KB arguments by prompt text (exact and normalised), and how many share each text."""

    exact: dict[tuple[str, str], list[str]] = field(default_factory=lambda: defaultdict(list))
    normal: dict[tuple[str, str], list[str]] = field(default_factory=lambda: defaultdict(list))
    by_proposition: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    by_locution: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    @classmethod
    def of(cls, arguments: pd.DataFrame) -> _KbTexts:
        missing = {"argument_id", "proposition", "locution"} - set(arguments.columns)
        if missing:
            raise ValueError(f"political_kb_arguments lacks column(s) {sorted(missing)}")
        texts = cls()
        ids = arguments["argument_id"].astype(str).tolist()
        for argument_id, (proposition, locution) in zip(ids, _prompt_keys(arguments), strict=True):
            texts.exact[(proposition, locution)].append(argument_id)
            texts.normal[(normalise_text(proposition), normalise_text(locution))].append(argument_id)
            texts.by_proposition[normalise_text(proposition)] += 1
            texts.by_locution[normalise_text(locution)] += 1
        return texts


def _released_matches(released: pd.DataFrame, kb: _KbTexts) -> list[tuple[str | None, str, int, tuple]]:
    """Per released row: ``(first argument, how, candidates, group key)``, or why it is unmatched."""
    matched: list[tuple[str | None, str, int, tuple]] = []
    for proposition, locution in zip(released["proposition"], released["locution"], strict=True):
        found = kb.exact.get((proposition, locution))
        if found:
            matched.append((found[0], "exact", len(found), ("exact", proposition, locution)))
            continue
        key = (normalise_text(proposition), normalise_text(locution))
        found = kb.normal.get(key)
        if found:
            matched.append((found[0], "normalised", len(found), ("normalised",) + key))
            continue
        n_prop, n_loc = kb.by_proposition.get(key[0], 0), kb.by_locution.get(key[1], 0)
        if n_prop:
            reason = f"the proposition is in the KB ({n_prop} arguments), with another locution"
        elif n_loc:
            reason = f"the locution is in the KB ({n_loc} arguments), with another proposition"
        else:
            reason = "neither the proposition nor the locution is in the KB"
        matched.append((None, "unmatched", 0, ("unmatched", reason)))
    return matched


def build_published_index(arguments: pd.DataFrame, released: pd.DataFrame) -> pd.DataFrame:
    """Map every released row to the KB arguments that received its prompt.

    Parameters
    ----------
    arguments
        ``political_kb_arguments`` (``argument_id``, ``proposition``, ``locution``), in KB order.
    released
        :func:`read_released_prompts` output.

    Returns
    -------
    pandas.DataFrame
        One row per released row (:data:`INDEX_COLUMNS`): ``argument_id`` (the first candidate in KB
        order; null when unmatched), ``match`` (``exact``, ``normalised``, ``unmatched``),
        ``n_candidates`` (KB arguments with that text), ``n_rows`` (released rows with that text),
        ``representative`` (this row's answers stand for the text: the lowest ``node_id``),
        ``representative_node_id``, ``reason`` (why unmatched, or which row stands for a repeat),
        and the texts as sent.
    """
    matched = _released_matches(released, _KbTexts.of(arguments))
    group_rows: dict[tuple, list[int]] = defaultdict(list)
    node_ids = released["node_id"].astype(int).tolist()
    for node_id, (_, how, _, key) in zip(node_ids, matched, strict=True):
        if how != "unmatched":
            group_rows[key].append(node_id)
    rows: list[tuple[object, ...]] = []
    for node_id, (argument_id, how, n, key), proposition, locution in zip(
        node_ids, matched, released["proposition"], released["locution"], strict=True
    ):
        if how == "unmatched":
            rows.append((node_id, None, how, 0, 1, False, None, key[1], proposition, locution))
            continue
        group = group_rows[key]
        first = min(group)
        reason = "" if node_id == first else f"repeats the text of row {first}, whose answers the KB carries"
        rows.append((node_id, argument_id, how, n, len(group), node_id == first, first, reason, proposition, locution))
    index = pd.DataFrame(rows, columns=INDEX_COLUMNS)
    index["representative_node_id"] = pd.array(index["representative_node_id"].tolist(), dtype="Int64")
    return index.astype({"node_id": "int64", "n_candidates": "int64", "n_rows": "int64", "representative": bool})


def argument_published_rows(arguments: pd.DataFrame, index: pd.DataFrame) -> pd.DataFrame:
    """Per KB argument, the released row whose answers it carries.

    Every argument whose prompt text (exact, else normalised) is that of a representative row gets
    that row, so arguments sharing a prompt share its answers.

    Returns
    -------
    pandas.DataFrame
        ``argument_id``, ``published_index`` (the row's ``nodeID``), ``match``, in KB order;
        arguments with no released row are absent.
    """
    representatives = index[index["representative"]]
    texts = list(
        zip(
            representatives["proposition"],
            representatives["locution"],
            representatives["node_id"],
            representatives["match"],
            strict=True,
        )
    )
    exact = {(proposition, locution): int(n) for proposition, locution, n, how in texts if how == "exact"}
    normal: dict[tuple[str, str], int] = {}
    for proposition, locution, n, _ in texts:
        normal.setdefault((normalise_text(proposition), normalise_text(locution)), int(n))
    rows = []
    for argument_id, (proposition, locution) in zip(
        arguments["argument_id"].astype(str), _prompt_keys(arguments), strict=True
    ):
        node_id = exact.get((proposition, locution))
        if node_id is not None:
            rows.append((argument_id, node_id, "exact"))
            continue
        node_id = normal.get((normalise_text(proposition), normalise_text(locution)))
        if node_id is not None:
            rows.append((argument_id, node_id, "normalised"))
    return pd.DataFrame(rows, columns=["argument_id", "published_index", "match"]).astype({"published_index": "int64"})


# ----------------------------------------------------------------------------------------------
# The platform's ensembles against the released ensemble files

COMPARISON_COLUMNS = ["ensemble", "argument_id", "published_index", "status", "detail"]


def _differing_fields(a: pd.DataFrame, b: pd.DataFrame, tolerance: float) -> list[list[str]]:
    """Per aligned row of the platform's ``a`` and the release's ``b``: the fields that differ."""
    problems: list[list[str]] = [[] for _ in range(len(a))]
    same_scores = [
        text == json.dumps([int(v) if float(v).is_integer() else float(v) for v in values])
        or scores_from_json(text) == [float(v) for v in values]
        for text, values in zip(a["scores"].astype(str), b["scores"], strict=True)
    ]
    checks = {
        "scores": np.asarray(same_scores, dtype=bool),
        "na_count": a["na_count"].to_numpy(dtype="int64") == b["na_count"].to_numpy(dtype="int64"),
    }
    for column in ("prob_na", "mean", "var", "std"):
        x, y = a[column].to_numpy(dtype=float), b[column].to_numpy(dtype=float)
        checks[column] = np.isclose(x, y, rtol=tolerance, atol=tolerance, equal_nan=True)
    for column, ok in checks.items():
        for position in np.flatnonzero(~ok):
            problems[position].append(column)
    return problems


def compare_with_released(
    pooled: pd.DataFrame,
    rows: pd.DataFrame,
    released: Mapping[str, pd.DataFrame],
    tolerance: float = 1e-9,
) -> pd.DataFrame:
    """Compare the platform's ensembles with the released ensemble files, argument by argument.

    Parameters
    ----------
    pooled
        ``political_ensembles`` (``system``, ``argument_id``, ``scores``, ``mean``, ``var``,
        ``std``, ``na_count``, ``prob_na``).
    rows
        :func:`argument_published_rows` (which released row each argument carries).
    released
        Ensemble name (``E2``, ``E3``) to its released file, read with
        :func:`argassets.political.published.read_published_tsv`.

    Returns
    -------
    pandas.DataFrame
        One row per ensemble and mapped argument: ``status`` is ``equal`` (the score array, in
        order, the NA count, the probability of NA and the moments agree), ``differs`` (``detail``
        says which field), ``absent_from_release`` (the row is one of those the release leaves
        out) or ``absent_from_platform`` (the platform has no pooled value for it).
    """
    frames = []
    for ensemble, published in released.items():
        mine = pooled[pooled["system"] == ensemble].drop_duplicates("argument_id").set_index("argument_id")
        theirs = published.drop_duplicates("node_id").set_index("node_id")
        frame = pd.DataFrame(
            {
                "ensemble": ensemble,
                "argument_id": rows["argument_id"].astype(str).to_numpy(),
                "published_index": rows["published_index"].astype("int64").to_numpy(),
            }
        )
        in_release = frame["published_index"].isin(theirs.index).to_numpy()
        in_platform = frame["argument_id"].isin(mine.index).to_numpy()
        both = in_release & in_platform
        a = mine.reindex(frame.loc[both, "argument_id"])
        b = theirs.reindex(frame.loc[both, "published_index"])
        problems = _differing_fields(a, b, tolerance)
        status = np.where(
            in_release, np.where(in_platform, "equal", "absent_from_platform"), "absent_from_release"
        ).astype(object)
        detail = np.full(len(frame), "", dtype=object)
        detail[both] = [", ".join(p) for p in problems]
        status[both] = ["differs" if p else "equal" for p in problems]
        frame["status"], frame["detail"] = status, detail
        frames.append(frame)
    if not frames:
        return pd.DataFrame({column: pd.Series(dtype=object) for column in COMPARISON_COLUMNS})
    return pd.concat(frames, ignore_index=True)[COMPARISON_COLUMNS]
