"""Assets: Study B, political positions of arguments (prompts, predictions, stats, ensembles, validation)."""

from argassets.political.assets import ensembles, knowledge_base, predictions, prompts, validation

ASSET_MODULES = [knowledge_base, prompts, predictions, ensembles, validation]
