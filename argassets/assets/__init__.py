"""Assets by stage. Each module holds one stage's assets; definitions.py loads them all."""
