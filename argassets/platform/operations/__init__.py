"""Operations: a study's definitions and job, the run engine, automation, recovery, Slurm, estimates, run tags."""
