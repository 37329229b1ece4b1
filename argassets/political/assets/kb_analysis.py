"""Study B's KB analysis: ideology against argument structure (relations, ambiguity, debates, acceptability)."""

import dagster as dg
import pandas as pd

from argassets.platform.reporting.pages import page_url
from argassets.platform.reporting.presentation import markdown_table, png_markdown
from argassets.political.assets.common import storable
from argassets.political.assets.results_page import RESULTS_PAGE
from argassets.political.results_page_kb import KB_ANCHOR
from argassets.political.structure import acceptability, ambiguity, debates, distance, facets, plots, positions
from argassets.political.structure.findings import REFERENCE

GROUP = "kb_analysis"
#: the columns of political_model_stats the positions read (not the score arrays)
STATS_COLUMNS = ["system", "argument_id", "mean", "std", "prob_na", "na_count", "invalid_count", "n_repetitions"]


def _md(frame: pd.DataFrame, max_rows: int = 200) -> dg.MetadataValue:
    return dg.MetadataValue.md(markdown_table(frame, max_rows=max_rows))


@dg.asset(group_name=GROUP, kinds={"duckdb", "pandas"})
def political_kb_facets(
    political_kb_arguments: pd.DataFrame,
    political_kb_relations: pd.DataFrame,
    political_dung_arguments: pd.DataFrame,
    political_dung_defeats: pd.DataFrame,
) -> dg.Output[pd.DataFrame]:
    """Per KB argument: debate, speaker role, illocutionary force, transition depth and grounded status."""
    table = facets.argument_facets(
        political_kb_arguments, political_kb_relations, political_dung_arguments, political_dung_defeats
    )
    depth = table["depth_bin"].value_counts().rename_axis("depth_bin").reset_index(name="arguments")
    status = (
        table[["justified", "undermined", "rebutted"]].sum().rename("arguments").rename_axis("status").reset_index()
    )
    return dg.Output(
        storable(table),
        metadata={
            "dagster/row_count": len(table),
            "speaker_roles": _md(facets.role_coverage(table)),
            "transition_depth": _md(depth),
            "acceptability": _md(status),
        },
    )


@dg.asset(
    group_name=GROUP,
    kinds={"duckdb", "pandas"},
    ins={"political_model_stats": dg.AssetIn(metadata={"columns": STATS_COLUMNS})},
)
def political_system_positions(
    political_model_stats: pd.DataFrame, political_ensembles: pd.DataFrame, political_ensemble_members: pd.DataFrame
) -> dg.Output[pd.DataFrame]:
    """Every model's and ensemble's position, std and P(NA) per argument, in one long table."""
    table = positions.system_positions(political_model_stats, political_ensembles, political_ensemble_members)
    per_system = (
        table.groupby(["system", "kind"], sort=False)
        .agg(
            arguments=("argument_id", "size"),
            political=("prob_na", lambda p: int((p < positions.POLITICAL_BELOW).sum())),
        )
        .reset_index()
    )
    return dg.Output(storable(table), metadata={"dagster/row_count": len(table), "systems": _md(per_system)})


@dg.multi_asset(
    outs={
        "political_relation_distance": dg.AssetOut(
            description="Political distance |Δ position| by relation and source side, per system, against a within-debate null.",
            group_name=GROUP,
            kinds={"duckdb", "pandas", "matplotlib"},
        ),
        "political_relation_robustness": dg.AssetOut(
            description="Per system: mean |Δ| of attacks minus that of supports, with its interval.",
            group_name=GROUP,
            kinds={"duckdb", "pandas"},
        ),
    },
)
def political_relation_tables(
    political_system_positions: pd.DataFrame, political_kb_relations: pd.DataFrame, political_kb_facets: pd.DataFrame
):
    """How far apart the ends of each relation sit, for every system, and how robust attacks > supports is."""
    table, robust = distance.relation_distances(political_system_positions, political_kb_relations, political_kb_facets)
    reference = table[(table["system"] == REFERENCE) & (table["source_side"] == "all")]
    yield dg.Output(
        storable(table),
        output_name="political_relation_distance",
        metadata={
            "dagster/row_count": len(table),
            f"{REFERENCE}": _md(reference),
            "open_kb_findings": dg.MetadataValue.url(page_url(f"{RESULTS_PAGE}#{KB_ANCHOR}")),
            "plot_attacks_vs_supports": dg.MetadataValue.md(
                png_markdown(plots.distance_plot(robust), "attacks vs supports per system")
            ),
        },
    )
    summary = distance.robustness_summary(robust)
    yield dg.Output(
        storable(robust),
        output_name="political_relation_robustness",
        metadata={
            "dagster/row_count": len(robust),
            "summary": dg.MetadataValue.json(summary),
            "per_system": _md(robust),
            # the KB findings with their plots on Study B's results page
            "open_kb_findings": dg.MetadataValue.url(page_url(f"{RESULTS_PAGE}#{KB_ANCHOR}")),
        },
    )


@dg.asset(group_name=GROUP, kinds={"duckdb", "pandas", "matplotlib"})
def political_ambiguity(
    political_system_positions: pd.DataFrame, political_kb_facets: pd.DataFrame
) -> dg.Output[pd.DataFrame]:
    """P(NA), ambiguous share and positional spread by force, speaker role, debate and transition depth."""
    table = ambiguity.ambiguity_by_facet(political_system_positions, political_kb_facets)
    shown = table[table["system"].isin([REFERENCE, positions.ACROSS_MODELS]) & (table["facet"] != "debate")]
    return dg.Output(
        storable(table),
        metadata={
            "dagster/row_count": len(table),
            f"{REFERENCE}_and_across_models": _md(shown),
            **{
                f"plot_{facet.replace(' ', '_')}": dg.MetadataValue.md(
                    png_markdown(plots.ambiguity_plot(table, REFERENCE, facet), f"ambiguity by {facet}")
                )
                for facet in ("force", "speaker role", "transition depth")
            },
        },
    )


@dg.asset(group_name=GROUP, kinds={"duckdb", "pandas", "matplotlib"})
def political_debate_positions(
    political_system_positions: pd.DataFrame, political_kb_facets: pd.DataFrame
) -> dg.Output[pd.DataFrame]:
    """Per system and dated debate: mean position of the political arguments and mean P(NA), with intervals."""
    table = debates.debate_positions(political_system_positions, political_kb_facets)
    return dg.Output(
        storable(table),
        metadata={
            "dagster/row_count": len(table),
            f"{REFERENCE}": _md(table[table["system"] == REFERENCE]),
            "plot": dg.MetadataValue.md(png_markdown(plots.debate_plot(table, REFERENCE), f"{REFERENCE} by debate")),
        },
    )


@dg.asset(group_name=GROUP, kinds={"duckdb", "pandas"})
def political_recurring_speakers(
    political_system_positions: pd.DataFrame, political_kb_facets: pd.DataFrame
) -> dg.Output[pd.DataFrame]:
    """Named speakers heard in several debates, traced: their mean position and P(NA) per debate and system."""
    table = debates.recurring_speakers(political_system_positions, political_kb_facets)
    return dg.Output(
        storable(table),
        metadata={
            "dagster/row_count": len(table),
            "speakers": int(table["speaker"].nunique()),
            f"{REFERENCE}": _md(table[table["system"] == REFERENCE], max_rows=400),
        },
    )


@dg.asset(group_name=GROUP, kinds={"duckdb", "pandas"})
def political_acceptability(
    political_system_positions: pd.DataFrame, political_kb_facets: pd.DataFrame
) -> dg.Output[pd.DataFrame]:
    """Do justified, undermined or rebutted arguments differ in position, extremity or P(NA)? Per system."""
    table = acceptability.acceptability_differences(political_system_positions, political_kb_facets)
    return dg.Output(
        storable(table),
        metadata={"dagster/row_count": len(table), f"{REFERENCE}": _md(table[table["system"] == REFERENCE])},
    )
