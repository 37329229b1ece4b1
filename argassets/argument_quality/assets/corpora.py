"""Assets: corpora (Webis-ArgQuality-20 texts and expert comparisons)."""

from collections.abc import Iterator
from typing import Any

import dagster as dg
import pandas as pd

from argassets.argument_quality.corpus import (
    DIMENSIONS,
    CorpusError,
    WebisFiles,
    ensure_sample_corpus,
    find_corpus_files,
    load_corpus,
    locate_corpus,
)
from argassets.argument_quality.resources import WebisSourceResource
from argassets.platform.paths import SAMPLE_DATA_DIR
from argassets.platform.resources.data import PublishedDataResource


def resolve_corpus_files(
    data: PublishedDataResource, source: WebisSourceResource, log: Any = None
) -> tuple[WebisFiles, dict[str, Any]]:
    """The corpus files and a description of where they came from.

    Order: the public release when a URL is configured (downloaded once, checksum-verified,
    cached); else the published-data folder (``$ARGASSETS_DATA_DIR`` or ``../shared/data``); else the
    embedded invented sample ``data/sample/``.
    """
    if source.is_configured():
        releases = source.fetch()
        files = find_corpus_files(*(release.folder for release in releases))
        for release in releases:
            if log is not None and not release.pinned:
                log.warning(
                    f"{release.url}: no SHA-256 configured; pinned {release.sha256} in the download cache. "
                    f"Set ARGASSETS_WEBIS_SHA256 to pin it in configuration."
                )
        return files, {
            "source": "release",
            "urls": ", ".join(release.url for release in releases),
            "sha256": ", ".join(release.sha256 for release in releases),
            "checksum_configured": all(release.pinned for release in releases),
        }
    root = data.root()
    if root is not None:
        return locate_corpus(root), {"source": "folder", "folder": str(root)}
    if log is not None:
        log.warning(
            "no corpus configured (ARGASSETS_DATA_DIR, ARGASSETS_WEBIS_URL): using the invented sample "
            f"corpus in {SAMPLE_DATA_DIR}"
        )
    return locate_corpus(ensure_sample_corpus()), {"source": "sample", "folder": str(SAMPLE_DATA_DIR)}


def corpus_summary_markdown(arguments: pd.DataFrame, comparisons: pd.DataFrame) -> str:
    """Per-topic counts of texts and comparisons as a Markdown table."""
    texts = arguments.groupby("topic_id").agg(texts=("text", "size"), argumentative=("is_argument", "sum"))
    per_dim = comparisons.pivot_table(
        index="topic_id", columns="dimension", values="comparison_id", aggfunc="count", fill_value=0
    )
    lines = ["| topic | texts | argumentative | " + " | ".join(DIMENSIONS) + " |"]
    lines.append("|---:|---:|---:|" + "---:|" * len(DIMENSIONS))
    for topic, row in texts.iterrows():
        counts = [
            str(int(per_dim.loc[topic, d])) if topic in per_dim.index and d in per_dim else "0" for d in DIMENSIONS
        ]
        lines.append(f"| {topic} | {row.texts} | {row.argumentative} | " + " | ".join(counts) + " |")
    totals = [str(int((comparisons["dimension"] == d).sum())) for d in DIMENSIONS]
    lines.append(f"| **all** | {len(arguments)} | {int(arguments['is_argument'].sum())} | " + " | ".join(totals) + " |")
    return "\n".join(lines)


@dg.multi_asset(
    outs={
        "webis_arguments": dg.AssetOut(
            description="Webis-ArgQuality-20 texts with their topic, ids, flags and published quality scores.",
            kinds={"duckdb", "pandas"},
            group_name="corpora",
        ),
        "webis_expert_comparisons": dg.AssetOut(
            description="Expert pairwise comparisons per quality dimension, with topic and stable id.",
            kinds={"duckdb", "pandas"},
            group_name="corpora",
        ),
    },
    name="webis_corpus",
)
def webis_corpus(
    context: dg.AssetExecutionContext, data: PublishedDataResource, webis_source: WebisSourceResource
) -> Iterator[dg.Output]:
    """Webis-ArgQuality-20 texts and expert comparisons, validated together (nothing written on error)."""
    files, origin = resolve_corpus_files(data, webis_source, context.log)
    try:
        arguments, comparisons = load_corpus(files)
    except CorpusError as exc:
        raise dg.Failure(description=str(exc)) from exc
    summary = dg.MetadataValue.md(corpus_summary_markdown(arguments, comparisons))
    common = {key: dg.MetadataValue.text(str(value)) for key, value in origin.items()}
    yield dg.Output(
        arguments,
        output_name="webis_arguments",
        metadata={
            **common,
            "dagster/row_count": len(arguments),
            "argumentative": int(arguments["is_argument"].sum()),
            "topics": int(arguments["topic_id"].nunique()),
            "file": dg.MetadataValue.path(str(files.arguments)),
            "summary": summary,
        },
    )
    yield dg.Output(
        comparisons,
        output_name="webis_expert_comparisons",
        metadata={
            **common,
            "dagster/row_count": len(comparisons),
            **{f"comparisons_{dim}": int((comparisons["dimension"] == dim).sum()) for dim in DIMENSIONS},
            "labels": dg.MetadataValue.json(comparisons["label"].value_counts().to_dict()),
            "summary": summary,
        },
    )
