"""A study's reports stay in step under automation: one report run at a time, no update forgotten.

Stand-in assets with the shape of a study (a model-partitioned root, ``votes`` over it, ``scores``
over the votes, ``summary`` beside them), the conditions of ``argassets/platform/operations/automation.py``
evaluated on an ephemeral instance. ``test_reports_in_step_with_the_daemon.py`` runs the real
thing (daemon, queue, real assets).
"""

from __future__ import annotations

from collections.abc import Iterator

import dagster as dg
import pytest

from argassets.platform.operations.automation import all_partitions_condition
from tests.instances import new_instance

K = dg.AssetKey
MODELS = dg.DynamicPartitionsDefinition(name="toy_models")
REPORTS = (K("votes"), K("scores"), K("summary"))


def _definitions(condition: dg.AutomationCondition) -> dg.Definitions:
    @dg.asset(partitions_def=MODELS)
    def judgments() -> None:
        """Stand-in judged partition."""

    @dg.asset(deps=[judgments], automation_condition=condition)
    def votes() -> None:
        """Stand-in aggregate over every partition."""

    @dg.asset(deps=[votes], automation_condition=condition)
    def scores() -> None:
        """Stand-in report over the aggregate."""

    @dg.asset(deps=[judgments], automation_condition=condition)
    def summary() -> None:
        """Stand-in report beside the others."""

    return dg.Definitions(assets=[judgments, votes, scores, summary])


def _condition(study_reports: bool = True) -> dg.AutomationCondition:
    return all_partitions_condition([K("judgments")], study_reports=("toy", REPORTS) if study_reports else None)


class Automation:
    """Ticks of the automation over ``defs`` on one ephemeral instance, as the sensor makes them."""

    def __init__(self, defs: dg.Definitions, instance: dg.DagsterInstance):
        self.defs, self.instance, self.cursor = defs, instance, None
        self.tick()  # the first evaluation only starts the conditions' memory

    def tick(self) -> set[str]:
        result = dg.evaluate_automation_conditions(defs=self.defs, instance=self.instance, cursor=self.cursor)
        self.cursor = result.cursor
        return {key.to_user_string() for key in REPORTS if result.get_requested_partitions(key)}

    def run(self, *names: str, partition: str | None = None) -> None:
        """One run of ``names`` (its asset selection recorded, as the daemon's runs have it)."""
        job = self.defs.resolve_implicit_global_asset_job_def()
        result = job.execute_in_process(
            instance=self.instance, asset_selection=[K(name) for name in names], partition_key=partition
        )
        assert result.success


@pytest.fixture()
def instance() -> Iterator[dg.DagsterInstance]:
    with new_instance() as instance:
        instance.add_dynamic_partitions("toy_models", ["m1"])
        yield instance


def test_an_upstream_update_after_the_request_is_answered_by_another_run(instance) -> None:
    automation = Automation(_definitions(_condition()), instance)
    automation.run("judgments", partition="m1")
    assert automation.tick() == {"votes", "scores", "summary"}
    # A second judging run lands after the reports were requested, then the report run lands: it
    # may have read the first copy, so the reports are requested again, once.
    automation.run("judgments", partition="m1")
    automation.run("votes", "scores", "summary")
    assert automation.tick() == {"votes", "scores", "summary"}
    automation.run("votes", "scores", "summary")
    assert automation.tick() == set()


def test_dagsters_since_last_handled_forgets_that_update(instance) -> None:
    """The control: with ``since_last_handled()`` the report run's own landing hides the update."""
    forgetful = _condition().replace(
        "upstream_updated_since_requested", dg.AutomationCondition.any_deps_updated().since_last_handled()
    )
    automation = Automation(_definitions(forgetful), instance)
    automation.run("judgments", partition="m1")
    assert automation.tick() == {"votes", "scores", "summary"}
    automation.run("judgments", partition="m1")
    automation.run("votes", "scores", "summary")
    assert automation.tick() == set()


@pytest.mark.parametrize("study_reports", [True, False], ids=["study-wide", "per-asset"])
def test_no_report_is_requested_while_a_report_run_of_the_study_is_in_flight(instance, study_reports: bool) -> None:
    defs = _definitions(_condition(study_reports))
    automation = Automation(defs, instance)
    automation.run("judgments", partition="m1")
    automation.run("votes", "scores", "summary")
    automation.tick()
    # A report run of the study is starting (summary only); then a model partition lands.
    job = defs.resolve_implicit_global_asset_job_def()
    starting = instance.create_run_for_job(
        job_def=job, asset_selection=frozenset({K("summary")}), status=dg.DagsterRunStatus.STARTING
    )
    automation.run("judgments", partition="m1")
    requested = automation.tick()
    if not study_reports:
        # Without the study-wide hold, votes and scores would start a second report run now.
        assert requested == {"votes", "scores"}
        return
    assert requested == set()
    instance.report_run_canceled(starting)
    # The update seen while that run held the reports back is answered now.
    assert automation.tick() == {"votes", "scores", "summary"}
