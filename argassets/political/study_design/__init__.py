"""Study B's next human studies: the political paper's two studies as designs, fresh designs drawn
from the knowledge base, and returned results turned into the tables the validation reads.

:mod:`.questions` (what annotators are asked), :mod:`.published` (the paper's studies as designs,
their result files in the import format, imported results as ``PointwiseStudy`` /
``PairwiseStudy``), :mod:`.sampling` (items and pairs from the KB, gold tasks from the published
studies, the simulation's pilot figures). The science is the platform's
(:mod:`argassets.platform.design`); docs/study_design.md tells the story.
"""
