"""What each KB argument is, besides its position: speaker role, force, dialogue depth, acceptability.

Speaker roles follow what QT30's speaker labels say (the text before the colon of a locution):

- ``chair``: a speaker heard in more than half of the dated debates (in QT30 the host, Fiona Bruce,
  is in all 30; nobody else is in more than 15);
- ``audience``: a label that says so (``Audience Member``, ``Female Aud 2``, the anonymised
  ``AudienceMember 20210318QT14``);
- ``unknown``: no label, or one that says the speaker is unknown (``Unknown Speaker``, ``Steve Unkown``);
- ``panellist``: any other named speaker with at least :data:`PANEL_MIN_ARGUMENTS` arguments in
  that debate (5 to 7 a debate, the size of a Question Time panel);
- ``other named``: the rest: named questioners, remote guests with a few turns, and people quoted
  by a speaker (``Boris Johnson`` in reported speech).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import shortest_path

from argassets.political import aspic

ROLES = ("chair", "panellist", "audience", "other named", "unknown")
PANEL_MIN_ARGUMENTS = 20
_AUDIENCE = r"(?i)\baud(?:ience)?\b|aud\d|audiencemember|\d{8}QT\d+"
_UNKNOWN = r"(?i)unknown|unkown"
#: Transition depths grouped for reports (the long tail is thin).
DEPTH_BINS = ((0, 0, "0"), (1, 2, "1-2"), (3, 5, "3-5"), (6, 10, "6-10"), (11, 20, "11-20"), (21, 10**9, "21+"))
NO_TRANSITION = "no transition"
IN_CYCLE = "unreachable (cycle)"

FACET_COLUMNS = [
    "argument_id",
    "episode",
    "speaker",
    "role",
    "force",
    "transition_depth",
    "depth_bin",
    "justified",
    "undermined",
    "rebutted",
]


def speaker_roles(arguments: pd.DataFrame, min_panel: int = PANEL_MIN_ARGUMENTS) -> pd.Series:
    """The role of each argument's speaker (index of ``arguments``); see the module docstring."""
    for column in ("speaker", "episode"):
        if column not in arguments:
            raise ValueError(f"speaker_roles: the arguments table lacks column {column!r}")
    speaker = arguments["speaker"].fillna("").astype(str).str.strip()
    dated = arguments["episode"].fillna("").astype(str)
    debates = dated[dated != ""].nunique()
    audience = speaker.str.contains(_AUDIENCE, regex=True).to_numpy()
    unknown = speaker.str.contains(_UNKNOWN, regex=True).to_numpy() | (speaker == "").to_numpy()
    named = ~audience & ~unknown
    presence = pd.Series(dated.values[named], index=speaker.values[named]).groupby(level=0).nunique()
    chairs = set(presence[presence > debates / 2].index)
    turns = pd.Series(0, index=arguments.index).groupby([speaker, dated]).transform("size").to_numpy()
    role = np.where(turns >= min_panel, "panellist", "other named").astype(object)
    role[named & speaker.isin(chairs).to_numpy()] = "chair"
    role[audience] = "audience"
    role[unknown] = "unknown"
    return pd.Series(role, index=arguments.index, name="role")


def transition_depths(arguments: pd.DataFrame, relations: pd.DataFrame) -> np.ndarray:
    """Steps from the start of a transition chain to each argument (-1: on no transition, -2: in a cycle).

    Depth is the shortest number of ``TRANSITIONS_TO`` steps from an argument that no transition
    reaches; an argument on no transition at all has none.
    """
    index = {a: i for i, a in enumerate(arguments["argument_id"])}
    ta = relations[relations["relation"] == "TRANSITIONS_TO"]
    src = ta["source_id"].map(index)
    tgt = ta["target_id"].map(index)
    unknown = src.isna() | tgt.isna()
    if unknown.any():
        row = ta[unknown].iloc[0]
        raise ValueError(f"transition {row['source_id']} -> {row['target_id']}: an end is no KB argument")
    n = len(index)
    src_i, tgt_i = src.to_numpy(dtype=int), tgt.to_numpy(dtype=int)
    on_transition = np.zeros(n, dtype=bool)
    on_transition[src_i] = on_transition[tgt_i] = True
    reached = np.zeros(n, dtype=bool)
    reached[tgt_i] = True
    roots = np.flatnonzero(on_transition & ~reached)
    # one extra node before every root: a single search gives every depth
    rows = np.concatenate([src_i, np.full(len(roots), n)])
    cols = np.concatenate([tgt_i, roots])
    graph = coo_matrix((np.ones(len(rows)), (rows, cols)), shape=(n + 1, n + 1)).tocsr()
    distance = shortest_path(graph, directed=True, unweighted=True, indices=n)
    depth = np.where(np.isfinite(distance[:n]), distance[:n] - 1, -2).astype(int)
    depth[~on_transition] = -1
    return depth


def depth_bin(depth: int) -> str:
    """The report bin of a :func:`transition_depths` value."""
    if depth == -1:
        return NO_TRANSITION
    if depth == -2:
        return IN_CYCLE
    return next(label for low, high, label in DEPTH_BINS if low <= depth <= high)


def acceptability_status(arguments: pd.DataFrame, dung_arguments: pd.DataFrame, defeats: pd.DataFrame) -> pd.DataFrame:
    """Per KB argument: is its proposition justified (concluded by an argument of the grounded
    extension), undermined (a premise attacked) or rebutted (a rule conclusion attacked)?"""
    grounded = aspic.grounded_extension(
        list(dung_arguments["dung_id"]), list(zip(defeats["attacker"], defeats["attacked"], strict=True))
    )
    justified = set(dung_arguments.loc[dung_arguments["dung_id"].isin(grounded), "conclusion"])
    undermined = set(defeats.loc[defeats["attack_type"] == "undermine", "target_conclusion"])
    rebutted = set(defeats.loc[defeats["attack_type"] == "rebut", "target_conclusion"])
    proposition = arguments["i_node_id"]
    return pd.DataFrame(
        {
            "justified": proposition.isin(justified).to_numpy(),
            "undermined": proposition.isin(undermined).to_numpy(),
            "rebutted": proposition.isin(rebutted).to_numpy(),
        },
        index=arguments.index,
    )


def argument_facets(
    arguments: pd.DataFrame, relations: pd.DataFrame, dung_arguments: pd.DataFrame, defeats: pd.DataFrame
) -> pd.DataFrame:
    """One row per KB argument: debate, speaker, role, force, transition depth and bin, acceptability."""
    depth = transition_depths(arguments, relations)
    status = acceptability_status(arguments, dung_arguments, defeats)
    frame = pd.DataFrame(
        {
            "argument_id": arguments["argument_id"].to_numpy(),
            "episode": arguments["episode"].fillna("").astype(str).to_numpy(),
            "speaker": arguments["speaker"].fillna("").astype(str).str.strip().to_numpy(),
            "role": speaker_roles(arguments).to_numpy(),
            "force": arguments["force"].fillna("").astype(str).to_numpy(),
            "transition_depth": depth,
            "depth_bin": [depth_bin(int(d)) for d in depth],
        }
    )
    for column in ("justified", "undermined", "rebutted"):
        frame[column] = status[column].to_numpy()
    return frame[FACET_COLUMNS]


def role_coverage(facets: pd.DataFrame) -> pd.DataFrame:
    """Arguments and distinct speakers per role (the rule's coverage, for the reports)."""
    grouped = facets.groupby("role").agg(arguments=("argument_id", "size"), speakers=("speaker", "nunique"))
    grouped = grouped.reindex(list(ROLES), fill_value=0).reset_index()
    grouped["share"] = grouped["arguments"] / max(len(facets), 1)
    return grouped
