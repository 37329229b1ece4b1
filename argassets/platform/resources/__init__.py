"""The platform's Dagster resources: published data, the registry, judges and their cache, table storage.

Configured from environment variables at run time, never at import. Study-specific resources live
with their study (its ``resources.py``); ``resources/`` assembles them all for the code location.
"""
