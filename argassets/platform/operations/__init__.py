"""Operations: running, recovering and scheduling runs (automation, Slurm, estimates, run tags)."""
