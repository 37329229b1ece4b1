"""Designing a study before anyone judges it: which items, which pairs, how many judgments, which
pairs an LLM judge should see next, and the files that go to and come back from the annotators.

Plain typed functions, no Dagster, no study names (docs/study_design.md):

- :mod:`.sampling`: items stratified by any column, reproducible by seed.
- :mod:`.pairs`: pairs within and between strata (the political paper's bin design), random pairs,
  and the connection entropy of a comparison graph.
- :mod:`.information`: Bradley-Terry Fisher information, standard errors and scale-separation
  reliability.
- :mod:`.simulation`: the number of judgments per item that reaches a stated reliability or
  interval width, by simulating annotators with known noise.
- :mod:`.adaptive`: rounds of pairs chosen by expected information gain, and when to stop.
- :mod:`.replay`: a design replayed on a complete set of labels (how many comparisons it needs).
- :mod:`.tasks`: a design's tasks, attention and gold items, and the participants' bundles.
- :mod:`.exchange`: the Prolific CSV and Label Studio files out, the returned results in, checked.
"""
