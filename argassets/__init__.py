"""argassets: a Dagster code location for LLM-as-judge research on arguments."""

from argassets.platform.judging.offline import apply_engine_environment

# No model hub, ever: every process that imports argassets, and every engine process it starts,
# runs with the offline flags set (argassets/platform/judging/offline.py).
apply_engine_environment()
