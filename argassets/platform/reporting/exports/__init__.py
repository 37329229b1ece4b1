"""Results leave in the field's formats: Every Eval Ever records and Hugging Face datasets with Croissant.

Plain functions, no Dagster: :mod:`.records` (the neutral evaluation record a study builds),
:mod:`.eee` (Every Eval Ever JSON), :mod:`.eee_validator` (EEE's own validator, from its wheel),
:mod:`.hf` (Parquet, dataset card, Croissant), :mod:`.tidy` (a judgments partition in the tidy
import format), :mod:`.studies` (each study's export declaration, found beside its package) and
:mod:`.bundle` (both exports end to end). docs/exports.md tells the whole story.
"""
