"""Assets: Study B, political positions of arguments (prompts, predictions, stats, ensembles, validation, KB analysis)."""

from argassets.political.assets import ensembles, kb_analysis, knowledge_base, predictions, prompts, validation

ASSET_MODULES = [knowledge_base, prompts, predictions, ensembles, validation, kb_analysis]
