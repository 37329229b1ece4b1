"""Assets: Study B, political positions of arguments (prompts, predictions, stats, ensembles, validation)."""


import base64
import math
import time
from pathlib import Path

import dagster as dg
import numpy as np
import pandas as pd

from argassets.lib.judges import default_batch_size
from argassets.lib.judging import JudgmentCache, judge_incrementally
from argassets.lib.political import (
    ENSEMBLES,
    N_REPETITIONS,
    build_requests,
    describe_scope,
    empty_predictions,
    ensemble_membership,
    members_of,
    model_stats,
    political_sampling,
    pool_ensemble,
    prediction_table,
    published_prediction_table,
    render_prompts,
    scope_arguments,
)
from argassets.lib.political_validation import (
    SUBSETS,
    PairwiseDesign,
    connection_entropy,
    evaluate_pairwise,
    evaluate_pointwise,
    graph_components,
    interannotator_agreement,
    item_keys,
    plot_f1_vs_alpha,
    system_item_values,
)
from argassets.lib.published_predictions import (
    match_study_items,
    published_tsv_to_predictions,
    read_pairwise_study,
    read_pointwise_study,
    read_published_tsv,
)
from argassets.lib.registry import ModelEntry, ModelRegistry
from argassets.partitions import PARTITION_METADATA, judge_models_partitions
from resources.data import PublishedDataResource
from resources.judges import JudgeResource, JudgmentCacheResource
from resources.registry import ModelRegistryResource

STUDY = "political"
HUMAN_DIR = "political/human"


# ------------------------------------------------------------------------------------------ helpers


def _storable(frame: pd.DataFrame) -> pd.DataFrame:
    """Text columns as pandas strings, so DuckDB types them VARCHAR even when empty or all null."""
    out = frame.copy()
    for column in out.columns:
        if out[column].dtype == object:
            out[column] = out[column].astype("string")
    return out


def _fmt(value: object, digits: int = 3) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    if isinstance(value, float | np.floating):
        return f"{float(value):.{digits}f}"
    return str(value)


def markdown_table(frame: pd.DataFrame, digits: int = 3, max_rows: int = 400) -> str:
    """A Markdown table of a small frame (numbers rounded for display only)."""
    if frame.empty:
        return "_empty_"
    columns = list(frame.columns)
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    for row in frame.head(max_rows).itertuples(index=False):
        lines.append("| " + " | ".join(_fmt(v, digits) for v in row) + " |")
    if len(frame) > max_rows:
        lines.append(f"\n_{len(frame) - max_rows} more rows in the table_")
    return "\n".join(lines)


def _png_markdown(png: bytes, alt: str) -> dg.MetadataValue:
    return dg.MetadataValue.md(f"![{alt}](data:image/png;base64,{base64.b64encode(png).decode('ascii')})")


def resolve_import_path(entry: ModelEntry, data_root: Path | None) -> Path:
    """Where a ``published_tsv`` import entry's file is: an absolute ``path`` as is; a relative one
    below the published-data folder (``$ARGASSETS_DATA_DIR``, default ``../shared/data``)."""
    path = Path(entry.path or "")
    if path.is_absolute():
        return path
    if data_root is None:
        raise FileNotFoundError(
            f"model '{entry.name}': relative path '{entry.path}' resolves against the published-data folder, "
            "but none is configured (set ARGASSETS_DATA_DIR)"
        )
    return data_root / path


def _kind(system: str, registry: ModelRegistry | None) -> str:
    if registry is not None:
        try:
            if registry.get(system).is_baseline:
                return "baseline"
        except KeyError:
            pass
    return "model"


def _published_tsv_systems(registry: ModelRegistry) -> set[str]:
    return {e.name for e in registry.models if e.backend == "import" and e.format == "published_tsv"}


# ------------------------------------------------------------------------------------------ prompts


@dg.asset(group_name="prompts", kinds={"duckdb", "pandas"})
def political_prompts(political_kb_arguments: pd.DataFrame) -> dg.Output[pd.DataFrame]:
    """The published protocol prompt (system + user) for every knowledge-base argument, with its hash."""
    prompts = render_prompts(political_kb_arguments)
    return dg.Output(
        _storable(prompts),
        metadata={
            "dagster/row_count": len(prompts),
            "distinct_prompts": int(prompts["prompt_sha256"].nunique()),
            "example_user_message": dg.MetadataValue.md("```\n" + (prompts["user"].iloc[0] if len(prompts) else "") + "\n```"),
        },
    )


@dg.asset(group_name="corpora", kinds={"duckdb", "pandas"})
def political_study_items(
    data: PublishedDataResource, political_kb_arguments: pd.DataFrame
) -> dg.Output[pd.DataFrame]:
    """Every item of the two human studies, matched to a KB argument through its text (or listed as unmatched)."""
    human = data.require(HUMAN_DIR)
    pointwise = read_pointwise_study(human)
    pairwise = read_pairwise_study(human)
    matches = match_study_items(political_kb_arguments, pointwise.items, pairwise.items)
    summary = matches.groupby(["study", "match"]).size().reset_index(name="items")
    unmatched = matches[matches["match"] == "unmatched"]
    return dg.Output(
        _storable(matches),
        metadata={
            "dagster/row_count": len(matches),
            "matched": int(matches["argument_id"].notna().sum()),
            "unmatched": len(unmatched),
            "unmatched_items": dg.MetadataValue.json(unmatched[["study", "meta_id"]].to_dict("records")),
            "matches": dg.MetadataValue.md(markdown_table(summary)),
        },
    )


# ------------------------------------------------------------------------------------------ predictions


@dg.asset(
    partitions_def=judge_models_partitions,
    metadata=PARTITION_METADATA,
    group_name="judgments",
    kinds={"duckdb", "pandas"},
    pool="gpu",
)
def political_predictions(
    context: dg.AssetExecutionContext,
    registry: ModelRegistryResource,
    judge: JudgeResource,
    judgment_cache: JudgmentCacheResource,
    data: PublishedDataResource,
    political_prompts: pd.DataFrame,
    political_study_items: pd.DataFrame,
) -> dg.Output[pd.DataFrame]:
    """Five left-right scores (0-100, NA or invalid) per KB argument from one judge model."""
    name = context.partition_key
    entry = registry.entry(name)
    scope_text = describe_scope(entry.scope)
    if not entry.takes_part_in(STUDY):
        context.log.info(f"{name} does not take part in the political study: empty partition")
        return dg.Output(
            empty_predictions(),
            metadata={"dagster/row_count": 0, "scope": "not in study", "backend": entry.backend,
                      "note": f"'{name}' does not take part in the political study (registry 'studies')"},
        )

    if entry.backend == "import" and entry.format == "published_tsv":
        path = resolve_import_path(entry, data.root())
        published = read_published_tsv(path)
        expanded = published_tsv_to_predictions(published, name, N_REPETITIONS)
        if entry.scope.max_arguments is not None:
            expanded = expanded[expanded["published_index"] < entry.scope.max_arguments]
        table = published_prediction_table(expanded, scope_text if scope_text != "full" else "full (published KB)")
        out_of_range = int((table["raw_output"].str.fullmatch(r"-?\d+") & ~table["is_valid"]).sum())
        return dg.Output(
            table,
            metadata={
                "dagster/row_count": len(table),
                "backend": "import (published_tsv)",
                "file": str(path),
                "arguments": int(table["argument_id"].nunique()),
                "keys": "paper:<nodeID>; nodeID indexes the paper's KB and cannot be mapped to this KB by "
                "position (see docs/political.md); study items link through prediction_index",
                "na": int(table["is_na"].sum()),
                "invalid": int((~table["is_valid"]).sum()),
                "out_of_range_published_values": out_of_range,
            },
        )

    sampling = political_sampling(entry)
    priority = political_study_items.sort_values("study", key=lambda s: s.map({"pairwise": 0, "pointwise": 1}), kind="stable")
    prompts = scope_arguments(political_prompts, priority["argument_id"].dropna().tolist(), entry.scope.max_arguments)
    requests = build_requests(prompts)
    context.log.info(f"{name}: {len(requests)} arguments in scope ({scope_text}) x {N_REPETITIONS} repetitions")
    the_judge = judge.build(entry)
    cache = JudgmentCache(":memory:") if entry.backend == "import" else judgment_cache.open()
    started = time.perf_counter()
    try:
        completions = judge_incrementally(
            the_judge, name, requests, sampling, N_REPETITIONS, cache,
            batch_size=default_batch_size(entry), log=context.log,
        )
    finally:
        cache.close()
        close = getattr(the_judge, "close", None)
        if callable(close):
            close()
    table = prediction_table(completions, name, sampling, the_judge.backend, entry.is_baseline, scope_text)
    sent = sum(not c.from_cache for c in completions)
    invalid = int((~table["is_valid"]).sum())
    metadata = {
        "dagster/row_count": len(table),
        "backend": entry.backend,
        "is_baseline": entry.is_baseline,
        "model_id": entry.model_id or "",
        "scope": scope_text,
        "repetitions": N_REPETITIONS,
        "sampling": dg.MetadataValue.json({**sampling.as_dict(), "key": sampling.key()}),
        "arguments_in_scope": len(prompts),
        "completions_sent": sent,
        "completions_from_cache": len(completions) - sent,
        "scores": int((table["is_valid"] & ~table["is_na"]).sum()),
        "na": int(table["is_na"].sum()),
        "invalid": invalid,
        "invalid_share": float(invalid / len(table)) if len(table) else 0.0,
        "elapsed_s": round(time.perf_counter() - started, 3),
        "cache": judgment_cache.location() if entry.backend != "import" else "none (import)",
    }
    if invalid:
        metadata["invalid_examples"] = dg.MetadataValue.json(table.loc[~table["is_valid"], "raw_output"].head(5).astype(str).tolist())
    return dg.Output(table, metadata=metadata)


# ------------------------------------------------------------------------------------------ aggregation


@dg.asset(group_name="aggregation", kinds={"duckdb", "pandas"})
def political_model_stats(political_predictions: pd.DataFrame) -> dg.Output[pd.DataFrame]:
    """Per argument and model: valid scores, mean, variance, std, NA count and probability of NA."""
    stats = model_stats(political_predictions)
    per_model = (
        stats.groupby("system")
        .agg(arguments=("argument_id", "size"), na=("na_count", "sum"), invalid=("invalid_count", "sum"),
             repetitions=("n_repetitions", "sum"), mean_prob_na=("prob_na", "mean"))
        .reset_index()
        if len(stats) else pd.DataFrame()
    )
    return dg.Output(
        _storable(stats),
        metadata={"dagster/row_count": len(stats), "models": dg.MetadataValue.md(markdown_table(per_model))},
    )


def _membership(stats: pd.DataFrame, registry: ModelRegistry) -> list:
    reasoning = {e.name: e.reasoning for e in registry.models}
    excluded: dict[str, str] = {}
    published = _published_tsv_systems(registry)
    for system in stats["system"].unique() if len(stats) else []:
        try:
            entry = registry.get(system)
        except KeyError:
            excluded[system] = "no longer in the registry"
            continue
        if entry.is_baseline:
            excluded[system] = "baseline"
        elif system in published:
            excluded[system] = "published import keyed by the paper's KB index, not by this KB's arguments"
    return ensemble_membership(stats, reasoning, excluded)


def _membership_frame(members: list) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"system": m.system, "reasoning": m.reasoning, "n_scores": m.n_scores, "n_na": m.n_na,
             "n_invalid": m.n_invalid, "eligible": m.eligible, "E1": m.in_e1, "E2": m.in_e2, "E3": m.in_e3,
             "note": m.note}
            for m in members
        ],
        columns=["system", "reasoning", "n_scores", "n_na", "n_invalid", "eligible", "E1", "E2", "E3", "note"],
    )


@dg.asset(group_name="aggregation", kinds={"duckdb", "pandas"})
def political_ensemble_members(
    registry: ModelRegistryResource, political_model_stats: pd.DataFrame
) -> dg.Output[pd.DataFrame]:
    """Which models form E1 (all), E2 (registry reasoning flag) and E3 (NA answers outnumber valid scores)."""
    frame = _membership_frame(_membership(political_model_stats, registry.load()))
    return dg.Output(
        _storable(frame),
        metadata={"dagster/row_count": len(frame), "membership": dg.MetadataValue.md(markdown_table(frame))},
    )


def ensemble_table(stats: pd.DataFrame, registry: ModelRegistry) -> tuple[pd.DataFrame, list, dict[str, list[str]]]:
    """E1, E2 and E3 pooled per argument, the membership, and the member names per ensemble."""
    members = _membership(stats, registry)
    frames = []
    listed = {}
    for ensemble in ENSEMBLES:
        names = members_of(members, ensemble)
        listed[ensemble] = names
        pooled = pool_ensemble(stats, names, ensemble)
        if len(pooled):
            frames.append(pooled)
    table = pd.concat(frames, ignore_index=True) if frames else pool_ensemble(stats, [], "E1")
    return table, members, listed


@dg.asset(group_name="aggregation", kinds={"duckdb", "pandas"})
def political_ensembles(
    registry: ModelRegistryResource, political_model_stats: pd.DataFrame
) -> dg.Output[pd.DataFrame]:
    """E1, E2 and E3 per argument, pooled over their members' repetitions (scores concatenated, NA counts added)."""
    table, members, listed = ensemble_table(political_model_stats, registry.load())
    return dg.Output(
        _storable(table),
        metadata={
            "dagster/row_count": len(table),
            "members": dg.MetadataValue.json(listed),
            "membership": dg.MetadataValue.md(markdown_table(_membership_frame(members))),
        },
    )


# ------------------------------------------------------------------------------------------ validation


class PairwiseValidationConfig(dg.Config):
    """Which E3 defines the E3-confident pairs: the paper's (``published:ensemble3``, default, so
    every row is scored on the paper's subsets) or the platform's own (``E3``)."""

    subset_ensemble: str = "published:ensemble3"


def _platform_systems(stats: pd.DataFrame, registry: ModelRegistry) -> pd.DataFrame:
    """Every platform model's and ensemble's per-argument stats.

    The ensembles are pooled here again from the stats with the same function and membership as
    ``political_ensembles`` (which this report follows in the lineage): when no model is eligible
    that table is empty, and the DuckDB IO manager does not write empty tables.
    """
    ensembles, _, _ = ensemble_table(stats, registry)
    columns = ["system", "argument_id", "scores", "prob_na"]
    frames = [f[columns] for f in (stats, ensembles) if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns)


@dg.asset(group_name="reports", kinds={"duckdb", "pandas", "matplotlib"}, deps=["political_ensembles"])
def political_pairwise_validation(
    context: dg.AssetExecutionContext,
    config: PairwiseValidationConfig,
    data: PublishedDataResource,
    registry: ModelRegistryResource,
    political_model_stats: pd.DataFrame,
    political_study_items: pd.DataFrame,
) -> dg.Output[pd.DataFrame]:
    """Rank agreement with the pairwise human study (footrule, d_tau, ordinal alpha, macro-F1) per system and subset."""
    study = read_pairwise_study(data.require(HUMAN_DIR))
    meta_ids = list(study.items["meta_id"])
    reg = registry.load()
    keys = item_keys(political_study_items, "pairwise", meta_ids)
    platform = system_item_values(_platform_systems(political_model_stats, reg), keys, "scores")
    published = {
        f"published:{prefix}": group.set_index("meta_id").loc[meta_ids, "scores"].map(list).tolist()
        for prefix, group in study.published.groupby("prefix")
    }
    systems: dict[str, tuple[str, list]] = {}
    for name, values in platform.items():
        kind = "ensemble" if name in ENSEMBLES else _kind(name, reg)
        systems[name] = (kind, values)
    for name, values in published.items():
        systems[name] = ("published-ensemble" if name.startswith("published:ensemble") else "published", values)
    reference = config.subset_ensemble
    if reference not in systems:
        raise ValueError(
            f"subset_ensemble '{reference}' has no scores for the pairwise items "
            f"(available: {', '.join(sorted(systems))})"
        )
    design = PairwiseDesign.build(meta_ids, study.pairs, study.votes, systems[reference][1])
    started = time.perf_counter()
    report = evaluate_pairwise(design, systems)
    context.log.info(f"{len(systems)} systems x {len(SUBSETS)} subsets in {time.perf_counter() - started:.1f} s")
    png = plot_f1_vs_alpha(report, title=f"Pairwise validation (subsets from {reference})")
    shown = report[report["subset"] == "all"].sort_values("alpha_ordinal", ascending=False)
    subset_sizes = {s: int(design.subsets[s].sum()) for s in SUBSETS}
    return dg.Output(
        _storable(report),
        metadata={
            "dagster/row_count": len(report),
            "systems": len(systems),
            "subset_ensemble": reference,
            "subset_sizes": dg.MetadataValue.json(subset_sizes),
            "all_pairs": dg.MetadataValue.md(markdown_table(shown.drop(columns=["subset"]))),
            "by_subset": dg.MetadataValue.md(markdown_table(report.sort_values(["subset", "system"]))),
            "macro_f1_vs_alpha": _png_markdown(png, "macro-F1 vs ordinal alpha per subset"),
        },
    )


@dg.asset(group_name="reports", kinds={"duckdb", "pandas"})
def political_human_agreement(
    data: PublishedDataResource, political_study_items: pd.DataFrame
) -> dg.Output[pd.DataFrame]:
    """Pairwise-study annotators: ordinal alpha between left- and right-framed rankings, and labels per pair."""
    study = read_pairwise_study(data.require(HUMAN_DIR))
    meta_ids = list(study.items["meta_id"])
    e3 = study.published[study.published["prefix"] == "ensemble3"].set_index("meta_id").loc[meta_ids, "scores"].map(list).tolist()
    design = PairwiseDesign.build(meta_ids, study.pairs, study.votes, e3)
    table = interannotator_agreement(design, study.votes)
    return dg.Output(
        _storable(table),
        metadata={"dagster/row_count": len(table), "agreement": dg.MetadataValue.md(markdown_table(table))},
    )


@dg.asset(group_name="reports", kinds={"duckdb", "pandas"})
def political_pairwise_connections(data: PublishedDataResource) -> dg.Output[pd.DataFrame]:
    """The 934-pair comparison graph: each argument's degree, bins reached and connection entropy (ideal 3 bits)."""
    study = read_pairwise_study(data.require(HUMAN_DIR))
    items = study.items
    index = {m: i for i, m in enumerate(items["meta_id"])}
    pairs = np.array([(index[a], index[b]) for a, b in zip(study.pairs["id1"], study.pairs["id2"], strict=True)])
    components, labels = graph_components(len(items), pairs)
    entropy = connection_entropy(pairs, items["bin_index"].to_numpy())
    degree = np.bincount(pairs.ravel(), minlength=len(items))
    bins = items["bin_index"].to_numpy()
    reached = [len({int(bins[j]) for j in np.concatenate([pairs[pairs[:, 0] == i, 1], pairs[pairs[:, 1] == i, 0]])}) for i in range(len(items))]
    table = pd.DataFrame(
        {"meta_id": items["meta_id"], "bin": items["bin"], "degree": degree.astype("int64"),
         "bins_reached": np.asarray(reached, dtype="int64"), "entropy_bits": entropy, "component": labels.astype("int64")}
    )
    non_empty = int(items["bin_index"].nunique())
    ideal = math.log2(non_empty)
    described = table["entropy_bits"].describe()
    return dg.Output(
        _storable(table),
        metadata={
            "dagster/row_count": len(table),
            "pairs": len(pairs),
            "connected": bool(components == 1),
            "components": int(components),
            "non_empty_bins": non_empty,
            "ideal_entropy_bits": ideal,
            "entropy_bits": dg.MetadataValue.json({k: float(v) for k, v in described.items()}),
            "entropy_histogram": dg.MetadataValue.md(
                markdown_table(pd.cut(table["entropy_bits"], bins=np.linspace(0, ideal, 7), include_lowest=True)
                               .value_counts().sort_index().rename_axis("entropy_bits").reset_index(name="arguments")
                               .astype({"entropy_bits": str}))
            ),
        },
    )


@dg.asset(group_name="reports", kinds={"duckdb", "pandas"}, deps=["political_ensembles"])
def political_pointwise_validation(
    data: PublishedDataResource,
    registry: ModelRegistryResource,
    political_model_stats: pd.DataFrame,
    political_study_items: pd.DataFrame,
) -> dg.Output[pd.DataFrame]:
    """Is the argument political? Agreement with the human majority per system and partition (full/confident/ambiguous)."""
    study = read_pointwise_study(data.require(HUMAN_DIR))
    meta_ids = list(study.items["meta_id"])
    reg = registry.load()
    keys = item_keys(political_study_items, "pointwise", meta_ids)
    platform = system_item_values(_platform_systems(political_model_stats, reg), keys, "prob_na")
    systems: dict[str, tuple[str, np.ndarray]] = {}
    for name, values in platform.items():
        kind = "ensemble" if name in ENSEMBLES else _kind(name, reg)
        systems[name] = (kind, np.array([np.nan if v is None else float(v) for v in values]))
    published_names = []
    for prefix, group in study.published.groupby("prefix"):
        name = f"published:{prefix}"
        kind = "published-ensemble" if prefix.startswith("ensemble") else "published"
        systems[name] = (kind, group.set_index("meta_id").loc[meta_ids, "prob_na"].to_numpy(dtype=float))
        if not prefix.startswith("ensemble"):
            published_names.append(name)
    platform_models = [n for n, (kind, _) in systems.items() if kind == "model"]
    report = evaluate_pointwise(
        study.items, systems, {"inter-model:platform": platform_models, "inter-model:published": published_names}
    )
    unscored = sorted(set(political_model_stats["system"].unique()) - set(platform)) if len(political_model_stats) else []
    return dg.Output(
        _storable(report),
        metadata={
            "dagster/row_count": len(report),
            "systems": len(systems),
            "systems_without_pointwise_items": dg.MetadataValue.json(unscored),
            "full": dg.MetadataValue.md(markdown_table(report[report["partition"] == "full"].sort_values("macro_f1", ascending=False))),
            "by_partition": dg.MetadataValue.md(markdown_table(report.sort_values(["partition", "system"]))),
        },
    )
