"""The environment variables the platform reads, listed once for ``argassets --help`` and the README.

A test (``tests/platform/test_cli_help.py``) greps the code for ``ARGASSETS_*`` names and fails
on any that is not listed here, so the help page stays complete.
"""

from __future__ import annotations

#: (name, what it sets). Every process reads them when it starts a run or a command: a change
#: needs a new ``argassets`` command, or a restart of ``argassets ui`` (its daemon and code server
#: keep the environment they started with).
ENVIRONMENT_VARIABLES: tuple[tuple[str, str], ...] = (
    ("DAGSTER_HOME", "the Dagster instance (runs, schedules); default .dagster_home/ in the project"),
    ("ARGASSETS_DATA_DIR", "published data folder; default ../shared/data"),
    ("ARGASSETS_SPECS_DIR", "protocol specifications; default ../shared/specs"),
    ("ARGASSETS_MODELS", "model registry file; default data/models.toml"),
    (
        "ARGASSETS_DUCKDB",
        "DuckDB file readers open (views; runs write .<name>.store.duckdb beside it); default var/argassets.duckdb",
    ),
    ("ARGASSETS_TABLES", "Parquet table store (folder or fsspec URL) instead of DuckDB"),
    ("ARGASSETS_CACHE", "judgment cache: SQLite file or postgresql:// URL; default beside the DuckDB file"),
    ("ARGASSETS_MODEL_CACHE", "extracted model folders; default ~/.cache/argassets/models"),
    ("ARGASSETS_EMBEDDING_CACHE", "text embeddings shared by every home; default ~/.cache/argassets/embeddings.sqlite"),
    (
        "ARGASSETS_WHEEL_CACHE",
        "wheels scripts/install keeps (llama.cpp, Every Eval Ever); default ~/.cache/argassets/wheels",
    ),
    ("ARGASSETS_EEE_WHEEL", "the every-eval-ever wheel whose validator checks exports; default in the wheel cache"),
    (
        "ARGASSETS_PAGES_URL",
        "where the results pages' links point (argassets ui serves them); default http://127.0.0.1:3001/",
    ),
    ("ARGASSETS_RUN_BACKENDS", "backends the registry sensor and schedule run automatically (or 'all')"),
    ("ARGASSETS_AUTOMATION", "'off': sensors and schedules start stopped (the UI's toggle wins)"),
    ("ARGASSETS_AUTOMATION_INTERVAL_S", "seconds between evaluations of the automation sensors; default 30"),
    ("ARGASSETS_EXECUTOR", "'in_process': a daemon-launched run's steps in the run's process (default multiprocess)"),
    ("ARGASSETS_RECOVER_AT_LOAD", "'off': no failing of orphaned runs when the code location loads"),
    ("ARGASSETS_OPENAI_BASE_URL", "default endpoint of openai entries"),
    ("ARGASSETS_OPENAI_API_KEY", "default API key of openai entries"),
    ("ARGASSETS_OPENAI_STRUCTURED_OUTPUT", "structured output for openai entries (see docs/operations.md)"),
    ("ARGASSETS_VLLM_URL_<MODEL>", "base URL of a model served by deploy/render.py's vLLM fleet"),
    ("ARGASSETS_VLLM_API_KEY", "API key of the vLLM fleet"),
    ("ARGASSETS_WEBIS_URL", "Webis-ArgQuality-20 download URL (Study A without published data)"),
    ("ARGASSETS_WEBIS_SHA256", "its expected SHA-256"),
    ("ARGASSETS_DOWNLOAD_CACHE", "where downloads are kept"),
    ("ARGASSETS_MAX_INVALID_SHARE", "bound on unparseable Study A judgments (check; default 0.01)"),
    ("ARGASSETS_BUDGET_GPU_HOURS", "refuse a Slurm partition whose estimate is above this many GPU-hours"),
    ("ARGASSETS_BUDGET_USD", "refuse a partition whose estimated cost is above this many US dollars"),
    ("ARGASSETS_K8S_GPU_NODE_SELECTOR", "JSON node selector of GPU runs on Kubernetes"),
    ("ARGASSETS_DAGSTER_PG_URL", "deploy/slurm/dagster.yaml: the instance's PostgreSQL"),
    ("ARGASSETS_SLURM_WORK_DIR", "Slurm job scripts and logs; default $DAGSTER_HOME/slurm"),
    ("SLURM_CONF", "which Slurm cluster sbatch, scontrol and scancel talk to"),
    ("NEO4J_URI", "Neo4j server of the KB export and --store neo4j (with NEO4J_USER, NEO4J_PASSWORD, NEO4J_DATABASE)"),
    ("NEO4J_USER", "Neo4j user"),
    ("NEO4J_PASSWORD", "Neo4j password (never shown)"),
    ("NEO4J_DATABASE", "Neo4j database"),
)


def environment_epilog() -> str:
    """The ``argassets --help`` epilog: one line per variable."""
    width = max(len(name) for name, _ in ENVIRONMENT_VARIABLES)
    lines = [f"  {name:<{width}}  {what}" for name, what in ENVIRONMENT_VARIABLES]
    return (
        "environment variables (read when a command or run starts; restart `argassets ui` after a change):\n"
        + "\n".join(lines)
    )
