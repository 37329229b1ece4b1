"""Which BBC Question Time episode each QT30 nodeset belongs to."""

from __future__ import annotations

import bisect
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

import pandas as pd

from argassets.political.aif import Corpus, nodeset_number

_MONTHS = {
    name: number
    for number, name in enumerate(
        [
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ],
        start=1,
    )
}

_FOLDER_DATE = re.compile(r"(\d{1,2})([A-Za-z]+)(\d{4})$")

_AUDIENCE_LABEL = re.compile(r"(20\d{2})(\d{2})(\d{2})QT\d+")

_AUDIENCE_LABEL_FULL = re.compile(r"20\d{6}QT\d+")


def folder_date(folder: str) -> str | None:
    """ISO date named by a release-batch folder (``cutiestestrun18march2021`` -> ``2021-03-18``)."""
    match = _FOLDER_DATE.search(folder)
    if not match:
        return None
    month = _MONTHS.get(match.group(2).lower())
    if month is None:
        return None
    return f"{match.group(3)}-{month:02d}-{int(match.group(1)):02d}"


def audience_label_dates(texts: Iterable[str]) -> Counter:
    """Dates in anonymised audience speaker labels (``AudienceMember 20210318QT14``), counted."""
    dates: Counter = Counter()
    for text in texts:
        for year, month, day in _AUDIENCE_LABEL.findall(text):
            dates[f"{year}-{month}-{day}"] += 1
    return dates


@dataclass
class _Evidence:
    """What each nodeset says about its date: a release folder, audience labels, L-node timestamps."""

    #: Nodeset -> (date, "folder") when a release-batch folder names it.
    folder: dict[str, tuple[str, str]] = field(default_factory=dict)
    #: Nodeset -> its most frequent L-node timestamp date.
    modal_l_date: dict[str, str] = field(default_factory=dict)
    #: Nodeset without folder evidence -> dates in its audience labels, counted.
    labels_of: dict[str, Counter] = field(default_factory=dict)
    #: Nodeset -> median id of its locution nodes (None without numeric ids).
    position: dict[str, int | None] = field(default_factory=dict)


def _evidence(corpus: Corpus) -> _Evidence:
    evidence = _Evidence()
    for nodeset in corpus.nodesets:
        folder_dates = Counter(d for d in (folder_date(f) for f in corpus.folders_of(nodeset.name)) if d)
        l_texts = [n.text for n in nodeset.nodes if n.node_type == "L"]
        l_ids = sorted(int(n.node_id) for n in nodeset.nodes if n.node_type == "L" and n.node_id.isdigit())
        evidence.position[nodeset.name] = l_ids[len(l_ids) // 2] if l_ids else None
        l_dates = Counter(n.timestamp[:10] for n in nodeset.nodes if n.node_type == "L" and n.timestamp)
        if l_dates:
            evidence.modal_l_date[nodeset.name] = sorted(l_dates.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        if folder_dates:
            evidence.folder[nodeset.name] = (folder_dates.most_common(1)[0][0], "folder")
        else:
            evidence.labels_of[nodeset.name] = audience_label_dates(l_texts)
    return evidence


def _audience_label_dates(
    corpus: Corpus, labels_of: dict[str, Counter], min_distinct_labels: int
) -> dict[str, tuple[str, str]]:
    """The most frequent audience-label date of each nodeset, among dates enough distinct labels carry."""
    distinct_labels: dict[str, set[str]] = defaultdict(set)
    for nodeset in corpus.nodesets:
        for n in nodeset.nodes:
            if n.node_type == "L":
                for label in _AUDIENCE_LABEL_FULL.findall(n.text):
                    distinct_labels[label[:8]].add(label)
    dated: dict[str, tuple[str, str]] = {}
    for name, labels in labels_of.items():
        supported = {d: c for d, c in labels.items() if len(distinct_labels[d.replace("-", "")]) >= min_distinct_labels}
        if supported:
            dated[name] = (sorted(supported.items(), key=lambda kv: (-kv[1], kv[0]))[0][0], "audience_label")
    return dated


def _timestamp_dates(
    names: list[str], strong: dict[str, tuple[str, str]], modal_l_date: dict[str, str], min_cluster: int
) -> dict[str, tuple[str, str]]:
    """The modal L date of each nodeset without strong evidence, when that date is an episode date."""
    established = {date for date, _ in strong.values()}
    cluster_sizes = Counter(modal_l_date[n] for n in names if n in modal_l_date)
    contradicted = {
        modal_l_date[n] for n in names if n in strong and n in modal_l_date and strong[n][0] != modal_l_date[n]
    }
    accepted = established | {d for d, size in cluster_sizes.items() if size >= min_cluster and d not in contradicted}
    return {
        name: (modal_l_date[name], "timestamp")
        for name in names
        if name not in strong and modal_l_date.get(name) in accepted
    }


def _nearest_dates(
    names: list[str], assigned: dict[str, tuple[str, str]], position: dict[str, int | None]
) -> dict[str, tuple[str, str]]:
    """The date of the nearest dated nodeset for every other one.

    Nearest by the median id of its locution nodes (AIFdb hands out node ids in annotation order,
    so the nodes of one episode's annotation session have neighbouring ids), else by nodeset number.
    """

    def key(name: str) -> int:
        known = position.get(name)
        return known if known is not None else nodeset_number(name)

    anchors = sorted((key(n), n) for n in assigned)
    numbers = [a for a, _ in anchors]
    nearest: dict[str, tuple[str, str]] = {}
    for name in names:
        if name in assigned:
            continue
        if not anchors:
            nearest[name] = ("", "unknown")
            continue
        number = key(name)
        pos = bisect.bisect_left(numbers, number)
        candidates = [anchors[i] for i in (pos - 1, pos) if 0 <= i < len(anchors)]
        best = min(candidates, key=lambda a: (abs(a[0] - number), a[0]))
        nearest[name] = (assigned[best[1]][0], "nearest_nodeset")
    return nearest


def assign_episodes(corpus: Corpus, min_cluster: int = 10, min_distinct_labels: int = 3) -> pd.DataFrame:
    """The broadcast date (``YYYY-MM-DD``) of the episode each nodeset annotates.

    QT30 carries no episode field, so the date is inferred, in this order of evidence:

    1. ``folder``: a release-batch folder named after a broadcast (``cutiestestrun18march2021``)
       holds a copy of the nodeset;
    2. ``audience_label``: the most frequent date in anonymised audience speaker labels
       (``AudienceMember 20210318QT14``) of the nodeset's locutions, counting only dates that at
       least ``min_distinct_labels`` distinct labels carry over the corpus (a one-off typo such as
       ``20210707QT01`` in the 2021-07-08 episode is thereby ignored);
    3. ``timestamp``: the most frequent date of the nodeset's L-node timestamps, accepted only when
       it is an episode date: a date that (1) or (2) established, or a date that is the most
       frequent L date of at least ``min_cluster`` nodesets none of which has (1) or (2) evidence
       for another date (annotation dates, such as the 2022 dates of late episodes or 2021-04-01
       for the 2021-03-18 episode, are thereby rejected);
    4. ``nearest_nodeset``: otherwise the episode of the nearest nodeset that got one from (1)-(3),
       nearest by the median id of the locution nodes (AIFdb hands out node ids in annotation
       order, so one episode's nodes have neighbouring ids even when a nodeset was re-saved
       later); ties go to the lower id.

    Returns
    -------
    DataFrame with columns ``nodeset``, ``episode``, ``episode_source``.
    """
    names = [n.name for n in corpus.nodesets]
    evidence = _evidence(corpus)
    strong = dict(evidence.folder)
    strong.update(_audience_label_dates(corpus, evidence.labels_of, min_distinct_labels))
    assigned = dict(strong)
    assigned.update(_timestamp_dates(names, strong, evidence.modal_l_date, min_cluster))
    assigned.update(_nearest_dates(names, assigned, evidence.position))
    return pd.DataFrame([(name, *assigned[name]) for name in names], columns=["nodeset", "episode", "episode_source"])
