"""Study B's next human studies, designed: items, pairs, judgments per item by simulation, files.

Materialised by hand (``argassets`` UI or ``dagster asset materialize``), never by run-default or
automation (kind ``study_design``): a design is drawn once and then fielded, and a redraw after an
input changed would silently replace a study already in the field.
"""

import math
from pathlib import Path

import dagster as dg
import numpy as np
import pandas as pd

from argassets.platform.design.exchange import export_study
from argassets.platform.design.pairs import connection_entropy
from argassets.platform.design.simulation import (
    choose_judgments,
    fit_label_probabilities,
    simulate_pairwise,
    simulate_pointwise,
)
from argassets.platform.design.tasks import StudyDesign, study_tasks
from argassets.platform.pairwise.graphs import components
from argassets.platform.paths import resolve_duckdb_path
from argassets.platform.reporting.presentation import figure_png, markdown_table, png_markdown, pyplot
from argassets.platform.resources.data import PublishedDataResource
from argassets.political.assets.prompts import HUMAN_DIR
from argassets.political.human_studies import read_pairwise_study, read_pointwise_study
from argassets.political.study_design import sampling
from argassets.political.study_design.questions import PAIRWISE_QUESTIONS, POLITICAL, argument_text
from argassets.political.validation.win_matrices import N_BINS

GROUP = "political_study_design"
KINDS = {"study_design", "duckdb", "pandas"}
ENSEMBLE_COLUMNS = ["system", "argument_id", "prob_na", "mean"]


def _string_columns(frame: pd.DataFrame) -> pd.DataFrame:
    """Text columns as pandas strings, so DuckDB types them VARCHAR even when all null."""
    return frame.astype({c: "string" for c in frame.columns if frame[c].dtype == object})


class DesignItemsConfig(dg.Config):
    """Who is sampled: buckets of the system's P(NA) (pointwise) and deciles of its position (pairwise)."""

    seed: int = 0
    system: str = "E3"
    pointwise_buckets: dict[str, list[float]] = {"low": [0.0, 0.05], "mid": [0.45, 0.55], "high": [0.95, 1.0]}
    pointwise_allocation: dict[str, int] = {"low": 400, "mid": 200, "high": 400}
    pairwise_max_prob_na: float = 0.05
    pairwise_items: int = 100
    #: ``published``: as many per decile as the paper's study had; ``equal``: spread evenly.
    pairwise_allocation: str = "published"


@dg.asset(
    group_name=GROUP, kinds=KINDS, ins={"political_ensembles": dg.AssetIn(metadata={"columns": ENSEMBLE_COLUMNS})}
)
def political_study_design_items(
    config: DesignItemsConfig,
    data: PublishedDataResource,
    political_kb_arguments: pd.DataFrame,
    political_ensembles: pd.DataFrame,
) -> dg.Output[pd.DataFrame]:
    """Arguments drawn for the next pointwise (P(NA) buckets) and pairwise (position deciles) studies."""
    candidates = sampling.kb_candidates(political_kb_arguments, political_ensembles, config.system)
    buckets = {name: (float(low), float(high)) for name, (low, high) in config.pointwise_buckets.items()}
    pointwise = sampling.pointwise_items(candidates, buckets, config.pointwise_allocation, config.seed)
    if config.pairwise_allocation not in ("published", "equal"):
        raise ValueError(f"pairwise_allocation must be 'published' or 'equal', got {config.pairwise_allocation!r}")
    allocation = None
    if config.pairwise_allocation == "published":
        allocation = sampling.published_allocation(read_pairwise_study(data.require(HUMAN_DIR)))
    pairwise = sampling.pairwise_items(
        candidates, config.pairwise_max_prob_na, config.pairwise_items, allocation, config.seed
    )
    table = pd.concat([pointwise, pairwise], ignore_index=True)
    counts = table.groupby(["study", "stratum"]).size().rename("items").reset_index()
    return dg.Output(
        _string_columns(table),
        metadata={
            "dagster/row_count": len(table),
            "system": config.system,
            "items_per_stratum": dg.MetadataValue.md(markdown_table(counts)),
        },
    )


class DesignPairsConfig(dg.Config):
    """How the pairwise items are paired: ``bins`` (the paper's), ``random`` or ``adaptive`` (round 0)."""

    method: str = "bins"
    within_per_bin: int = 44
    between_per_bin_pair: int = 22
    pairs: int = 934
    seed: int = 0


@dg.asset(group_name=GROUP, kinds=KINDS)
def political_study_design_pairs(
    config: DesignPairsConfig, political_study_design_items: pd.DataFrame
) -> dg.Output[pd.DataFrame]:
    """Pairs of the designed pairwise study, with their decile bins and the kind of block."""
    items = political_study_design_items[political_study_design_items["study"] == "pairwise"].reset_index(drop=True)
    pairs = sampling.design_pairs(
        items, config.method, config.within_per_bin, config.between_per_bin_pair, config.pairs, config.seed
    )
    index = {a: i for i, a in enumerate(items["argument_id"])}
    pair_index = np.c_[pairs["item_1"].map(index).to_numpy(), pairs["item_2"].map(index).to_numpy()]
    count, _ = components(len(items), pair_index[:, 0], pair_index[:, 1])
    entropy = connection_entropy(pair_index, items["bin_index"].to_numpy(), N_BINS)
    blocks = pd.crosstab(pairs["stratum_1"], pairs["stratum_2"]).reset_index().rename(columns={"stratum_1": "bin"})
    return dg.Output(
        _string_columns(pairs),
        metadata={
            "dagster/row_count": len(pairs),
            "kinds": dg.MetadataValue.json(pairs["kind"].value_counts().to_dict()),
            "connected": bool(count == 1),
            "entropy_bits": dg.MetadataValue.json(
                {
                    "min": float(entropy.min()),
                    "mean": float(entropy.mean()),
                    "ideal": math.log2(items["bin_index"].nunique()),
                }
            ),
            "pairs_per_bin_pair": dg.MetadataValue.md(markdown_table(blocks)),
        },
    )


class DesignSimulationConfig(dg.Config):
    """Targets and the grid the simulation tries (pilot: the published studies)."""

    target_ssr: float = 0.8
    pairwise_judgments: list[int] = list(range(1, 11))
    target_alpha_width: float = 0.1
    pointwise_annotators: list[int] = list(range(2, 11))
    replications: int = 100
    seed: int = 0


def _simulation_plot(pairwise: pd.DataFrame, pointwise: pd.DataFrame, config: DesignSimulationConfig) -> bytes:
    plt = pyplot()
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    k = pairwise["judgments_per_pair"]
    left.fill_between(k, pairwise["ssr_low"], pairwise["ssr_high"], alpha=0.3, label="SSR 95% of replications")
    left.plot(k, pairwise["ssr"], marker="o", label="SSR (what the analyst sees)")
    left.plot(k, pairwise["reliability"], marker="s", label="true reliability (simulation)")
    left.axhline(config.target_ssr, color="grey", linestyle="--")
    left.set(xlabel="judgments per pair", ylabel="reliability", title="pairwise: BT reliability")
    left.legend(fontsize=7)
    right.plot(pointwise["annotators_per_item"], pointwise["alpha_width"], marker="o")
    right.axhline(config.target_alpha_width, color="grey", linestyle="--")
    right.set(
        xlabel="annotators per item", ylabel="width of alpha's 95% range", title="pointwise: Krippendorff's alpha"
    )
    return figure_png(fig)


@dg.asset(group_name=GROUP, kinds=KINDS)
def political_study_design_simulation(
    config: DesignSimulationConfig,
    data: PublishedDataResource,
    political_study_design_items: pd.DataFrame,
    political_study_design_pairs: pd.DataFrame,
) -> dg.Output[pd.DataFrame]:
    """Judgments per item that reach the targets (SSR, alpha's interval width), by simulation from the published pilots."""
    human = data.require(HUMAN_DIR)
    items = political_study_design_items
    pair_items = items[items["study"] == "pairwise"].reset_index(drop=True)
    index = {a: i for i, a in enumerate(pair_items["argument_id"])}
    pairs = political_study_design_pairs
    pair_index = np.c_[pairs["item_1"].map(index).to_numpy(), pairs["item_2"].map(index).to_numpy()]
    pool = sampling.pilot_pool(read_pairwise_study(human))
    pairwise = simulate_pairwise(
        pair_index, len(pair_items), pool, config.pairwise_judgments, config.replications, config.seed
    )
    beta = fit_label_probabilities(sampling.pilot_label_counts(read_pointwise_study(human)), 3)
    n_pointwise = int((items["study"] == "pointwise").sum())
    pointwise = simulate_pointwise(beta, n_pointwise, config.pointwise_annotators, config.replications, config.seed)
    chosen_pairwise = choose_judgments(pairwise, "judgments_per_pair", "ssr", config.target_ssr, at_least=True)
    chosen_pointwise = choose_judgments(
        pointwise, "annotators_per_item", "alpha_width", config.target_alpha_width, at_least=False
    )
    pairwise = pairwise.rename(columns={"judgments_per_pair": "per_item"}).assign(
        study="pairwise", chosen=lambda f: f["per_item"] == chosen_pairwise
    )
    pointwise = pointwise.rename(columns={"annotators_per_item": "per_item"}).assign(
        study="pointwise", chosen=lambda f: f["per_item"] == chosen_pointwise
    )
    table = pd.concat([pairwise, pointwise], ignore_index=True)
    table = table[
        ["study", "per_item", "chosen", *[c for c in table.columns if c not in ("study", "per_item", "chosen")]]
    ]
    png = _simulation_plot(
        pairwise.rename(columns={"per_item": "judgments_per_pair"}),
        pointwise.rename(columns={"per_item": "annotators_per_item"}),
        config,
    )
    return dg.Output(
        _string_columns(table),
        metadata={
            "dagster/row_count": len(table),
            "chosen": dg.MetadataValue.json(
                {"pairwise_judgments_per_pair": chosen_pairwise, "pointwise_annotators_per_item": chosen_pointwise}
            ),
            "pilot": dg.MetadataValue.json(
                {"strength_sd": pool.strength_sd, "tie_share": pool.tie_share, "beta": list(beta)}
            ),
            "pairwise": dg.MetadataValue.md(markdown_table(pairwise)),
            "pointwise": dg.MetadataValue.md(markdown_table(pointwise)),
            "figure": dg.MetadataValue.md(png_markdown(png, "reliability against judgments per item")),
        },
    )


class DesignTasksConfig(dg.Config):
    """Bundles, check rates and where the files go (default: ``study_design/political/`` beside the DuckDB file)."""

    attention_rate: float = 0.1
    gold_rate: float = 0.1
    #: Gold tasks available per question (from the published studies, arguments not in the design).
    gold_pool: int = 20
    pointwise_bundle: int = 5
    pairwise_bundle: int = 6
    seed: int = 0
    output_dir: str | None = None


def _chosen(simulation: pd.DataFrame, study: str) -> int:
    chosen = simulation[(simulation["study"] == study) & simulation["chosen"]]
    if chosen.empty:
        raise ValueError(f"the simulation reached no target for the {study} study: widen its grid")
    return int(chosen["per_item"].iloc[0])


def _designs(
    config: DesignTasksConfig, human: Path, items: pd.DataFrame, pairs: pd.DataFrame, simulation: pd.DataFrame
) -> tuple[StudyDesign, StudyDesign]:
    """The pointwise and the pairwise design, with their gold tasks (attention tasks come with the export)."""
    texts = {
        a: argument_text(p, loc)
        for a, p, loc in zip(items["argument_id"], items["proposition"], items["locution"], strict=True)
    }
    of = {
        study: {a: texts[a] for a in items.loc[items["study"] == study, "argument_id"]}
        for study in ("pointwise", "pairwise")
    }
    pointwise = StudyDesign(
        "pointwise",
        (POLITICAL,),
        study_tasks([POLITICAL], of["pointwise"]),
        _chosen(simulation, "pointwise"),
        config.pointwise_bundle,
    )
    per_framing = math.ceil(_chosen(simulation, "pairwise") / len(PAIRWISE_QUESTIONS))
    tasks = study_tasks(PAIRWISE_QUESTIONS, of["pairwise"], pairs)
    pairwise = StudyDesign("pairwise", PAIRWISE_QUESTIONS, tasks, per_framing, config.pairwise_bundle)
    if config.gold_rate > 0:
        used = set(items["argument_id"])
        pointwise = pointwise.with_tasks(
            sampling.pointwise_gold(read_pointwise_study(human), used, config.gold_pool, config.seed)
        )
        pairwise = pairwise.with_tasks(
            sampling.pairwise_gold(read_pairwise_study(human), used, config.gold_pool, config.seed)
        )
    return pointwise, pairwise


@dg.asset(group_name=GROUP, kinds=KINDS)
def political_study_design_tasks(
    config: DesignTasksConfig,
    data: PublishedDataResource,
    political_study_design_items: pd.DataFrame,
    political_study_design_pairs: pd.DataFrame,
    political_study_design_simulation: pd.DataFrame,
) -> dg.Output[pd.DataFrame]:
    """Both studies' bundles (study, attention and gold tasks), written for Prolific and Label Studio."""
    folder = (
        Path(config.output_dir) if config.output_dir else resolve_duckdb_path().parent / "study_design" / "political"
    )
    designs = _designs(
        config,
        data.require(HUMAN_DIR),
        political_study_design_items,
        political_study_design_pairs,
        political_study_design_simulation,
    )
    frames, written, per_task = [], {}, {}
    for name, design in zip(("pointwise", "pairwise"), designs, strict=True):
        design, bundles, paths = export_study(
            design, config.attention_rate, config.gold_rate, config.seed, folder / name
        )
        kinds = design.tasks.set_index("task_id")["kind"]
        frames.append(bundles.assign(study=name, kind=bundles["task_id"].map(kinds)))
        written.update({f"{name}_{key}": str(path) for key, path in paths.items()})
        per_task[name] = design.judgments_per_task
    table = pd.concat(frames, ignore_index=True)[["study", "bundle", "position", "task_id", "question", "kind"]]
    summary = (
        table.groupby(["study", "kind"]).agg(rows=("task_id", "size"), bundles=("bundle", "nunique")).reset_index()
    )
    places = {s: int(table.loc[table["study"] == s, "bundle"].nunique()) for s in ("pointwise", "pairwise")}
    return dg.Output(
        _string_columns(table),
        metadata={
            "dagster/row_count": len(table),
            "places": dg.MetadataValue.json(places),
            "judgments_per_task (pairwise: per framing)": dg.MetadataValue.json(per_task),
            "summary": dg.MetadataValue.md(markdown_table(summary)),
            "files": dg.MetadataValue.json(written),
            "folder": dg.MetadataValue.path(str(folder)),
        },
    )
