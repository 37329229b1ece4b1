"""Study A's corpus source (defined with its study: :mod:`argassets.argument_quality.resources`)."""

from argassets.argument_quality.resources import WebisSourceResource

__all__ = ["WebisSourceResource"]
