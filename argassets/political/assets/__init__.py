"""Assets: Study B, political positions of arguments (prompts, predictions, stats, ensembles, validation, retrieval)."""

from argassets.political.assets import ensembles, knowledge_base, predictions, prompts, retrieval, validation

ASSET_MODULES = [knowledge_base, prompts, predictions, ensembles, validation, retrieval]
