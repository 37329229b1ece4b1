"""Validation of political-position predictions against the two human studies.

Pointwise (is the argument political?)
    A system predicts "political" when its probability of NA is **strictly below 0.5**
    (:data:`NA_THRESHOLD`, :func:`predicts_political`). Against the human majority it gets macro-F1,
    micro-F1, precision and recall of the political class, balanced accuracy, and nominal
    Krippendorff alpha (the system and the majority as two raters) (:func:`pointwise_metrics`).
    Among models, nominal alpha is reported under two conventions: the paper's Figure 2 one, a
    model's label counting only when its repetitions agree (:func:`agreed_political`, missing
    otherwise), and the platform's threshold (:func:`threshold_political`); only missing values
    let alpha go below :func:`nominal_alpha_floor` (``alpha_conventions``, docs/political.md).

Pairwise (which argument is more right-wing?)
    Scores are binned into deciles, ``bin = max(ceil(s / 10) - 1, 0)`` (:func:`decile_bins`; 0 and
    10 share bin 0). A system's win matrix counts, over every combination of an argument's valid
    scores with the other argument's, 1 when the first bin is greater, 0.5 when equal and 0 when
    less, **only over the annotated pairs of the set evaluated** (zero elsewhere). With ``H`` the
    per-argument histogram over bins and ``K`` the 10x10 kernel ``K[a, b] = w(a, b)``, that matrix
    is ``(H K H^T) * M`` for the pair mask ``M`` (:func:`win_matrix`); :func:`win_matrix_loop` is
    the direct double loop over repetitions, kept as the reference.

    Humans: per pair three right-framed ("which is more right-wing?") and three left-framed
    ("which is more left-wing?") labels, 1 = first, 2 = second, 0 = equal (0.5 to each); the
    left-framed matrix is transposed, and ``W(H) = W(H_left)^T + W(H_right)``, six votes per pair
    (:func:`human_win_matrices`).

    Bradley-Terry strengths come from ``choix.ilsr_pairwise_dense(W, alpha=0.01)`` over all 100
    items (:func:`bt_strengths`), ranks are the ranks of the strengths (ties share their average
    rank). Against the aggregate human ranking: ``d_footrule = 1 - sum |r_m - r_h| / (n^2 / 2)``,
    ``d_tau = 1 - discordant / C(n, 2)``, ordinal Krippendorff alpha between the two rank vectors,
    and macro-F1 over the pairs in file orientation (gold ``W_H(id1, id2) / 6 >= 0.5``, prediction
    ``W_m(id1, id2) / (W_m(id1, id2) + W_m(id2, id1)) >= 0.5``), averaging the classes present.

Nothing is rounded here; reports round for display only.
"""
