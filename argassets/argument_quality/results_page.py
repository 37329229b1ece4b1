"""Study A's results page: the agreement leaderboard, the reproduction verdicts, the length bias, the trust table,
prompt variants and perturbations."""

from __future__ import annotations

from typing import Any

import pandas as pd

from argassets.argument_quality.agreement_reports import HEADLINE_METRIC
from argassets.argument_quality.bt_scores import MEAN_DIMENSION
from argassets.argument_quality.length_bias_report import ALL_DIMENSIONS, KIND_REFERENCE
from argassets.argument_quality.metric_choice import CHOICE_METRICS, LOWER_IS_BETTER, metric_choice_section
from argassets.argument_quality.prompt_axis_page import PromptAxis, prompt_axis_section
from argassets.argument_quality.published import PUBLISHED_METRICS
from argassets.argument_quality.reliability import BATTERY_METRICS, EXPERTS
from argassets.argument_quality.scope import DIMENSIONS
from argassets.platform.pairwise.reliability import FLAGGED_PROPERTY
from argassets.platform.reporting.metric_figure import metric_bar_figure
from argassets.platform.reporting.results_page import Leaderboard, Section, results_page

HEADLINE_SAYS = (
    "Cohen's kappa of the configuration's majority labels (A, B, Tie) against the expert labels, "
    "mean over the three dimensions, with its 95% interval clustered over topics; higher is better. "
    "The best set is chosen among judges: baselines are left out of it by rule, not because they always "
    "score lower (their rank on every metric: 'Does the answer depend on the metric?' below)."
)
PER_DIMENSION_SAYS = (
    "Cohen's kappa of the configuration's majority labels (A, B, Tie) against the expert labels on one "
    "dimension (logic, rhetoric or dialectic), with its 95% interval clustered over topics; higher is better."
)
OTHER_METRICS = [
    "krippendorff_alpha",
    "percent_agreement",
    "pearson",
    "spearman",
    "kendall",
    "correlation_mean",
    "mae",
    "rmse",
    "n_comparisons",
    "n_items",
    "n_no_verdict",
    "scope",
    "in_registry",
    "published_as",
    "reproduced",
]
#: Colours by row kind, the same in every plot of the page.
KIND_COLOURS = {"measured": "#1f77b4", "published": "#7f7f7f", "baseline": "#bbbbbb", KIND_REFERENCE: "#d62728"}


def leaderboard_figure(means: pd.DataFrame) -> Any:
    """Bars of each metric per configuration (a button per metric) with intervals, the baselines as dashed lines."""
    shown = means.assign(configuration=means["model"] + " / " + means["strategy"])
    # a baseline's strategies share one value: one line per baseline, named by the model
    baselines = shown[shown["kind"] == "baseline"].drop_duplicates("model")
    references = list(baselines["configuration"])
    return metric_bar_figure(
        shown,
        "configuration",
        [m for m in CHOICE_METRICS if m in shown.columns],
        references,
        KIND_COLOURS,
        "Against the experts (mean over dimensions; bars: 95% clustered intervals; dashed: baselines)",
        lower_is_better=LOWER_IS_BETTER,
    )


def length_bias_figure(report: pd.DataFrame) -> Any:
    """Share of decisive verdicts to the longer argument: one panel per dimension and one over all.

    The experts' share is a dashed red line in each panel; the legend sits above the panels, so it
    covers no bar, and the figure grows with the number of configurations, so no panel is cut.
    """
    import plotly.express as px

    panels = [d for d in [*DIMENSIONS, ALL_DIMENSIONS] if d in set(report["dimension"])]
    judges = report[report["kind"] != KIND_REFERENCE]
    judges = judges.assign(configuration=judges["model"] + " / " + judges["strategy"])
    figure = px.bar(
        judges,
        x="share_longer",
        y="configuration",
        color="kind",
        facet_col="dimension",
        category_orders={"dimension": panels},
        orientation="h",
        color_discrete_map=KIND_COLOURS,
        hover_data=["share_longer_experts"],
        title="Decisive verdicts that go to the longer argument (dashed: the experts)",
    )
    # with the share axis fixed to [0, 1], plotly.js autoranged the category axis of these facets to
    # [-1, 4], hiding the sixth configuration and half the fifth: both axes are ranged here
    configurations = judges["configuration"].nunique()
    figure.update_xaxes(range=[0, 1])
    figure.update_yaxes(range=[-0.5, configurations - 0.5])
    experts = report[report["kind"] == KIND_REFERENCE].set_index("dimension")["share_longer"]
    for column, dimension in enumerate(panels, start=1):
        if dimension in experts.index and pd.notna(experts[dimension]):
            figure.add_vline(x=float(experts[dimension]), line_dash="dash", line_color="#d62728", col=column, row=1)
    figure.for_each_annotation(lambda note: note.update(text=note.text.removeprefix("dimension=")))
    height = 260 + 18 * configurations
    figure.update_layout(
        height=height, margin={"t": 120}, legend={"orientation": "h", "y": 1.12, "yanchor": "bottom", "x": 0}
    )
    return figure


def verdict_table(report: pd.DataFrame) -> pd.DataFrame:
    """The rows of configurations with ``published_as``: the verdict and the differences to the paper."""
    if "reproduced" not in report.columns:
        return pd.DataFrame(columns=["model", "strategy", "dimension", "reproduced"])
    rows = report[report["reproduced"].notna() & (report["kind"] != "published")]
    deltas = [f"delta_{m}" for m in PUBLISHED_METRICS.values() if f"delta_{m}" in rows.columns]
    columns = ["model", "strategy", "dimension", "published_as", "reproduced", "metrics_reproduced", "metrics_compared"]
    return rows[[*columns, *deltas]].reset_index(drop=True)


NO_VERDICTS_SAY = (
    "No verdict yet: no configuration judged here is one of the paper's (a registry entry with "
    "published_as, e.g. mistral-7b-instruct-v0.3, needs a GPU); the baselines of run-default have no "
    "published counterpart. The paper's own figures are the 'published' rows of the leaderboard."
)


COMPARISONS_SAY = (
    "Each configuration against the best one and against each baseline, on the same topics: the paired "
    "difference (configuration minus reference) with its 95% interval clustered over topics and the "
    "Holm-adjusted p-value; mean over the dimensions."
)


def comparison_table(comparisons: pd.DataFrame) -> pd.DataFrame:
    """The headline comparisons (mean over dimensions; kappa and Pearson) for the page."""
    columns = [
        "model",
        "strategy",
        "metric",
        "role",
        "reference_model",
        "reference_strategy",
        "value",
        "reference_value",
    ]
    more = ["difference", "difference_low", "difference_high", "p_adjusted", "verdict"]
    if comparisons.empty:
        return pd.DataFrame(columns=[*columns, *more])
    rows = comparisons[
        (comparisons["dimension"] == MEAN_DIMENSION) & comparisons["metric"].isin([HEADLINE_METRIC, "pearson"])
    ]
    return rows[[*columns, *more]].reset_index(drop=True)


TRUST_SAYS = (
    "Each cell: the figure over all three dimensions and its 95% interval over topics. Transitivity: share "
    "of fully judged triads that violate weak stochastic transitivity, or form a strict 3-cycle (lower is "
    "more coherent); position consistency: verdicts unchanged when A and B swap; run agreement: pairs "
    "whose 3 runs agree; tie share; longer share: decisive verdicts to the longer argument (0.5 = blind "
    "to length). Flags: a figure whose whole interval lies past its tolerance. The experts' row is the human reference; how to read it: docs/reliability.md."
)


def trust_table(battery: pd.DataFrame) -> pd.DataFrame:
    """One row per judge (the experts first), one ``figure [low, high]`` cell per battery metric, over all dimensions."""
    overall = battery[battery["dimension"] == ALL_DIMENSIONS]
    cells = overall.assign(
        cell=[
            f"{e:.3f} [{lo:.3f}, {hi:.3f}]" if pd.notna(lo) else (f"{e:.3f}" if pd.notna(e) else "not measured")
            for e, lo, hi in zip(overall["estimate"], overall["low"], overall["high"], strict=True)
        ]
    )
    table = cells.pivot(index=["model", "strategy"], columns="metric", values="cell").reset_index()
    table = table[["model", "strategy", *[m for m in BATTERY_METRICS if m in table.columns]]]
    table.insert(2, "kind", [KIND_REFERENCE if m == EXPERTS else "judge" for m in table["model"]])
    marked = overall[overall["flagged"].astype(bool)]
    flags = marked.groupby(["model", "strategy"])["metric"].agg(lambda m: ", ".join(FLAGGED_PROPERTY[x] for x in m))
    keys = pd.MultiIndex.from_frame(table[["model", "strategy"]])
    table["flags"] = flags.reindex(keys).fillna("").to_numpy()
    first = (table["model"] != EXPERTS).astype(int)
    return table.assign(_first=first).sort_values(["_first", "model", "strategy"], kind="stable").drop(columns="_first")


def reproduction_board(agreement: pd.DataFrame) -> Leaderboard:
    """The reproduction verdicts of the configurations with ``published_as``."""
    verdicts = verdict_table(agreement)
    note = (
        "A metric is reproduced when the published value lies inside the platform's interval (clustered "
        "over topics); a configuration is reproduced when every compared metric is."
    )
    if verdicts.empty:
        note += f" {NO_VERDICTS_SAY}"
    return Leaderboard(
        "Reproduction verdicts",
        verdicts,
        [c for c in verdicts.columns if c != "reproduced"],
        None,
        kind_column="reproduced",
        note=note,
    )


def comparisons_board(comparisons: pd.DataFrame) -> Leaderboard:
    """The paired comparisons with the best configuration and the baselines."""
    return Leaderboard(
        "Paired comparisons (mean over dimensions)",
        comparison_table(comparisons),
        keys=["model", "strategy", "metric", "role", "reference_model", "reference_strategy"],
        headline=None,
        others=["value", "reference_value", "difference", "difference_low", "difference_high", "p_adjusted"],
        kind_column="verdict",
        note=COMPARISONS_SAY,
    )


def trust_sections(battery: pd.DataFrame | None) -> list[Section]:
    """The trust table's section, when the battery has rows."""
    if battery is None or not len(battery):
        return []
    table = trust_table(battery)
    # a table of facts: every figure is shown at once (``others`` would hide them behind "all columns")
    shown = [c for c in table.columns if c != "kind"]
    trust = Leaderboard("Trust: the reliability battery", table, shown, None, note=TRUST_SAYS)
    return [Section("How far to trust each judge", tables=[trust])]


def aq_page_html(
    agreement: pd.DataFrame,
    length_bias: pd.DataFrame,
    best_by: str,
    comparisons: pd.DataFrame | None = None,
    battery: pd.DataFrame | None = None,
    prompt_axis: PromptAxis | None = None,
) -> str:
    """Study A's page from its reports (agreement, length bias, comparisons, battery; prompt axis: ``PromptAxis``)."""
    means = agreement[agreement["dimension"] == MEAN_DIMENSION]
    per_dimension = agreement[agreement["dimension"] != MEAN_DIMENSION]
    others = [c for c in OTHER_METRICS if c in agreement.columns]
    board = Leaderboard(
        "Configurations against the experts (mean over dimensions)",
        means,
        keys=["model", "strategy"],
        headline=HEADLINE_METRIC,
        headline_says=HEADLINE_SAYS,
        others=others,
        best_column="best_set",
        best_label="best set",
        rank_tabs=CHOICE_METRICS,
        lower_is_better=LOWER_IS_BETTER,
        note=f"Best set: {best_by}. Intervals: 95%, clustered over topics (published rows have none: "
        "the paper gives aggregates). Kinds: measured (judged here), published (the paper's figures), baseline.",
    )
    dimensions = Leaderboard(
        "Per dimension",
        per_dimension,
        ["model", "strategy", "dimension"],
        HEADLINE_METRIC,
        PER_DIMENSION_SAYS,
        others,
        best_kinds=(),  # "best" is a configuration's, on the table above
    )
    verdict_board = reproduction_board(agreement)
    compared = [] if comparisons is None else [comparisons_board(comparisons)]
    sections = [
        Section(
            "Leaderboard",
            tables=[board, dimensions, *compared],
            figures=[leaderboard_figure(means)],
            anchor="leaderboard",
        ),
        *trust_sections(battery),
        *(prompt_axis_section(agreement, *prompt_axis) if prompt_axis is not None else []),
        metric_choice_section(means, HEADLINE_METRIC),
        Section("Reproduction of the paper", tables=[verdict_board]),
        Section(
            "Length bias",
            "Share of decisive verdicts that go to the longer argument, per configuration and dimension.",
            figures=[length_bias_figure(length_bias)] if len(length_bias) else [],
        ),
    ]
    return results_page(
        "Study A: argument quality (Webis-ArgQuality-20), LLM judges against the experts",
        f"{len(means)} configurations (model / strategy). Every table sorts by a click on a column "
        "header and filters by the box above it.",
        sections,
    )
