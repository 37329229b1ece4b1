"""What the knowledge base says: ideology against argument structure (plain functions, no Dagster).

``facets`` (speaker role, force, transition depth, grounded status per argument), ``positions``
(every system's position per argument), ``intervals`` (bootstrap by debate), ``distance`` (political
distance by relation), ``ambiguity``, ``debates``, ``acceptability``, ``findings`` (the README's
Study B figures) and ``synthetic`` (test and benchmark data with known answers).
"""
