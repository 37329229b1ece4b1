"""The pairwise core any pairwise study shares, keyed by study-neutral columns (docs/pairwise.md)."""
