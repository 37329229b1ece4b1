"""The platform both studies share: paths, the model registry, partitions, judging and judges,
presentation, automation."""
