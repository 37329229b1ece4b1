"""Judging: requests and the Judge interface, the judging step, label probabilities and token counts."""
