"""The model registry: entries, their differences, and the model partitions."""
