"""Judging on an HPC cluster: each run of a model partition as one Slurm job (docs/operations.md)."""
