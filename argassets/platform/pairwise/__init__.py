"""The pairwise core any pairwise study shares: votes, count matrices, Bradley-Terry scores,
agreement, ensembles and position bias, keyed by study-neutral columns (the item pair, the facet,
the run, the judge). Plain typed functions; nothing here knows a study.

Modules: :mod:`.labels` (verdict codes, keyed tables as integers), :mod:`.votes`, :mod:`.expected`,
:mod:`.matrices`, :mod:`.scores`, :mod:`.agreement`, :mod:`.ensembles`, :mod:`.position_bias`.
"""
