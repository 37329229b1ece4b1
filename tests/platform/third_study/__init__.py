"""A third pairwise study (persuasiveness), declared entirely inside tests/: the proof that a study
needs no edit of a shared file. ``study.py`` declares it; ``assets.py`` and ``checks.py`` are its
Dagster definitions; ``science.py`` its plain functions; ``corpus.py`` its synthetic corpus."""
