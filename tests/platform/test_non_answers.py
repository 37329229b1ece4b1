"""A non-answer is never a final judgment (issue 10, item 5), on both cache backends.

An empty body, a body the backend could not read (no choices, not the expected JSON) or empty text
is stored as a non-answer: invalid in the table, and asked again at the next materialisation until
it is answered or has had ``MAX_ATTEMPTS`` attempts (given up). An answer is final, including text
the study cannot parse (prose, a score out of range): that is the model's invalid judgment, never
asked again. Concurrent runs still send each key at most once: a run asks a non-answer again only
while it is the one the run saw. PostgreSQL is a real server (tests/postgres_server.py).
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import dagster as dg
import duckdb
import pandas as pd

from argassets.argument_quality.assets import judgments
from argassets.argument_quality.resources import WebisSourceResource
from argassets.platform.judging.incremental import MAX_ATTEMPTS, JudgingPolicy, judge_incrementally
from argassets.platform.judging.interface import (
    CachedCompletion,
    ChatRequest,
    Completion,
    SamplingParams,
    is_non_answer,
    utc_now,
)
from argassets.platform.pairwise.labels import LABELS
from argassets.platform.paths import SAMPLE_DATA_DIR
from argassets.platform.registry.model_entry import ModelEntry
from argassets.platform.resources.data import PublishedDataResource
from argassets.platform.resources.judges import JudgeResource, JudgmentCacheResource
from argassets.platform.resources.registry import ModelRegistryResource
from argassets.platform.resources.storage import duckdb_io_manager
from argassets.platform.storage.judgment_cache import open_judgment_cache
from argassets.platform.storage.judgment_cache.interface import new_owner_id
from argassets.platform.storage.reader_file import copy_warehouse
from argassets.political.predictions import prediction_table
from tests.model_partitions import add_partitions
from tests.sample_fixtures import UPSTREAM

SAMPLING = SamplingParams(1.0, seed=0)


def _completion(text: str, run: int, answered: bool = True) -> Completion:
    now = utc_now()
    return Completion(text, run, None, 0.01, now, now, answered=answered)


def _requests(n: int) -> list[ChatRequest]:
    return [ChatRequest(f"item-{i}", "system", f"user {i}", choices=LABELS) for i in range(n)]


class ScriptedJudge:
    """Answers each (request key, run) from ``script[key]`` by attempt (the last entry repeats),
    ``"A"`` for keys without a script, and records every (key, run) it is sent in ``sent``.

    An entry is a text, or ``(text, False)`` for a response the backend flags as no answer.
    ``asked`` counts the attempts per (key, run) over every judge sharing it (not cleared by tests).
    """

    backend = "scripted"

    def __init__(
        self,
        script: dict[str, list],
        sent: list[tuple[str, int]],
        asked: Counter | None = None,
        delay_s: float = 0.0,
    ):
        self.script = script
        self.sent = sent
        self.asked: Counter = Counter() if asked is None else asked
        self.delay_s = delay_s
        self._lock = threading.Lock()

    def complete(self, requests: Sequence[ChatRequest], sampling: SamplingParams, runs: Sequence[int]):
        out = []
        for request in requests:
            row = []
            for run in runs:
                with self._lock:
                    attempt = self.asked[(request.key, run)]
                    self.asked[(request.key, run)] += 1
                    self.sent.append((request.key, run))
                steps = self.script.get(request.key, ["A"])
                step = steps[min(attempt, len(steps) - 1)]
                text, answered = step if isinstance(step, tuple) else (step, True)
                row.append(_completion(text, run, answered))
            out.append(row)
        time.sleep(self.delay_s)
        return out

    def close(self) -> None:
        """Nothing to free."""


# --- the definition ------------------------------------------------------------------------------


def test_what_a_non_answer_is() -> None:
    assert is_non_answer("") and is_non_answer(" \n\t") and is_non_answer(None)
    assert is_non_answer("A", answered=False)  # flagged by the backend, whatever came back
    assert not is_non_answer("A") and not is_non_answer(" tie. ") and not is_non_answer('{"Score": "NA"}')
    # Text the study cannot parse is the model's (invalid) answer, not a non-answer.
    assert not is_non_answer("I prefer A") and not is_non_answer("A or B") and not is_non_answer('{"Score": 101}')


def test_a_flagged_non_answer_is_invalid_in_the_table_even_when_its_text_parses() -> None:
    now = utc_now()

    def cached(key: str, text: str, answered: bool) -> CachedCompletion:
        return CachedCompletion(key, 0, "m", "sha", "k", text, None, 0.1, now, now, "b", False, answered=answered)

    table = prediction_table(
        [cached("x", '{"Score": 40}', True), cached("y", '{"Score": 40}', False)], "m", SAMPLING, "b", False, "full"
    )
    assert table.set_index("argument_id")["is_valid"].to_dict() == {"x": True, "y": False}
    assert table["score"].isna().tolist() == [False, True]


# --- the store: only the very non-answer a caller asks again is replaced -------------------------


def test_only_the_non_answer_asked_again_is_replaced(cache_location: str) -> None:
    cache = open_judgment_cache(cache_location)
    sk = SAMPLING.key()
    p0, p1, p2 = ("p", 0), ("p", 1), ("p", 2)
    alice, bob = new_owner_id(), new_owner_id()
    first = [("p", _completion("A", 0)), ("p", _completion("  ", 1)), ("p", _completion('{"x"', 2, answered=False))]
    assert cache.store("m", sk, "t", first) == {p0, p1, p2}
    rows = cache.lookup("m", sk)
    assert [(rows[item]["answered"], rows[item]["attempts"]) for item in (p0, p1, p2)] == [
        (True, 1),
        (False, 1),
        (False, 1),
    ]
    # An answer is never replaced, not even by a store that says it asks it again; a store that
    # does not ask again leaves a non-answer alone too.
    assert cache.store("m", sk, "t", [("p", _completion("B", 0))], again={p0: 1}) == set()
    assert cache.store("m", sk, "t", [("p", _completion("B", 1))]) == set()
    assert cache.lookup("m", sk)[p0]["text"] == "A" and cache.lookup("m", sk)[p1]["text"] == "  "
    # A claim that does not ask again finds the non-answers stored; one that does claims them.
    plain = cache.claim("m", sk, [p1, p2], alice, 30)
    assert plain.claimed == set() and set(plain.stored) == {p1, p2}
    seen = {p0: 1, p1: 1, p2: 1}
    outcome = cache.claim("m", sk, [p0, p1, p2], alice, 30, again=seen)
    assert outcome.claimed == {p1, p2} and set(outcome.stored) == {p0}
    # Bob, asking the same non-answers again at the same time, gets nothing to send: they are Alice's.
    rival = cache.claim("m", sk, [p0, p1, p2], bob, 30, again=seen)
    assert rival.claimed == set() and set(rival.stored) == {p0}
    # Alice stores: run 1 is answered now, run 2 is a non-answer again; both count a second attempt.
    assert cache.store("m", sk, "t", [("p", _completion("Tie", 1)), ("p", _completion("", 2))], alice, seen) == {
        p1,
        p2,
    }
    rows = cache.lookup("m", sk)
    assert (rows[p1]["text"], rows[p1]["answered"], rows[p1]["attempts"]) == ("Tie", True, 2)
    assert (rows[p2]["text"], rows[p2]["answered"], rows[p2]["attempts"]) == ("", False, 2)
    assert cache.claims() == 0
    # Bob still holds what he saw (attempts 1): both keys changed since, so they are final for him,
    # nothing is claimed and his late store changes nothing.
    late = cache.claim("m", sk, [p1, p2], bob, 30, again=seen)
    assert late.claimed == set() and late.stored[p1]["text"] == "Tie" and late.stored[p2]["attempts"] == 2
    assert cache.store("m", sk, "t", [("p", _completion("B", 2))], bob, again=seen) == set()
    # Asked again as it is now (attempts 2): replaced, third attempt.
    assert cache.store("m", sk, "t", [("p", _completion("B", 2))], again={p2: 2}) == {p2}
    rows = cache.lookup("m", sk)
    assert (rows[p2]["text"], rows[p2]["answered"], rows[p2]["attempts"]) == ("B", True, 3)
    assert cache.count() == 3
    cache.close()


# --- judging through the cache -------------------------------------------------------------------


def test_a_non_answer_is_asked_again_until_it_is_answered(cache_location: str) -> None:
    requests = _requests(4)
    sent: list[tuple[str, int]] = []
    script = {
        "item-1": ["", "B"],  # an empty body, then an answer
        "item-2": [" \n", "Tie"],  # whitespace only, then an answer
        "item-3": [("A", False), "A"],  # a body the backend could not read, then an answer
    }
    judge = ScriptedJudge(script, sent)
    cache = open_judgment_cache(cache_location)

    def judged() -> list[CachedCompletion]:
        return judge_incrementally(judge, "m", requests, SAMPLING, 2, cache, batch_size=3)

    first = judged()
    assert len(sent) == 8 and not any(c.from_cache for c in first)
    assert [c.answered for c in first] == [True, True, False, False, False, False, False, False]
    assert all(c.attempts == 1 for c in first)
    # Next materialisation: only the six non-answers go out, and the answers replace them.
    sent.clear()
    second = judged()
    assert sorted(sent) == [(f"item-{i}", run) for i in (1, 2, 3) for run in (0, 1)]
    assert [c.text for c in second] == ["A", "A", "B", "B", "Tie", "Tie", "A", "A"]
    assert all(c.answered for c in second)
    assert [(c.from_cache, c.attempts) for c in second[:2]] == [(True, 1)] * 2
    assert [(c.from_cache, c.attempts) for c in second[2:]] == [(False, 2)] * 6
    # Answers are final: nothing is sent again.
    sent.clear()
    third = judged()
    assert sent == [] and all(c.from_cache for c in third)
    assert [(c.text, c.attempts) for c in third] == [(c.text, c.attempts) for c in second]
    cache.close()


def test_a_judge_that_never_answers_is_asked_max_attempts_times(cache_location: str) -> None:
    requests = _requests(3)
    sent: list[tuple[str, int]] = []
    judge = ScriptedJudge({"item-0": [""], "item-2": ["  "]}, sent)
    cache = open_judgment_cache(cache_location)
    for attempt in range(1, MAX_ATTEMPTS + 3):
        sent.clear()
        results = judge_incrementally(judge, "m", requests, SAMPLING, 2, cache)
        if attempt == 1:
            assert len(sent) == 6
        elif attempt <= MAX_ATTEMPTS:
            assert sorted(sent) == [("item-0", 0), ("item-0", 1), ("item-2", 0), ("item-2", 1)]
        else:
            assert sent == []  # given up: never sent again
        silent = [c for c in results if c.key != "item-1"]
        assert all(not c.answered and c.attempts == min(attempt, MAX_ATTEMPTS) for c in silent)
        assert [(c.answered, c.attempts) for c in results if c.key == "item-1"] == [(True, 1)] * 2
    rows = cache.lookup("m", SAMPLING.key())
    assert sorted(row["attempts"] for row in rows.values()) == [1, 1] + [MAX_ATTEMPTS] * 4
    cache.close()


def test_an_invalid_answer_is_kept_and_not_asked_again(cache_location: str) -> None:
    """Prose, or a score out of range, is the model's answer: invalid in the table, never re-asked."""
    requests = _requests(3)
    sent: list[tuple[str, int]] = []
    # What a second attempt would say: had it been asked again, these texts would show it.
    script = {"item-0": ['{"Score": 101}', '{"Score": 40}'], "item-1": ["I prefer A", "A"]}
    judge = ScriptedJudge(script, sent)
    cache = open_judgment_cache(cache_location)
    first = judge_incrementally(judge, "m", requests, SAMPLING, 2, cache)
    assert len(sent) == 6 and all(c.answered and c.attempts == 1 for c in first)
    rows = cache.lookup("m", SAMPLING.key())
    assert len(rows) == 6 and all(row["answered"] and row["attempts"] == 1 for row in rows.values())
    sent.clear()
    second = judge_incrementally(judge, "m", requests, SAMPLING, 2, cache)
    assert sent == [] and all(c.from_cache and c.answered and c.attempts == 1 for c in second)
    assert [c.text for c in second] == ['{"Score": 101}'] * 2 + ["I prefer A"] * 2 + ["A"] * 2
    cache.close()
    table = prediction_table(second, "m", SAMPLING, "scripted", False, "full")
    out_of_range = table[table["argument_id"] == "item-0"]
    assert not out_of_range["is_valid"].any() and out_of_range["score"].isna().all()
    assert out_of_range["raw_output"].tolist() == ['{"Score": 101}'] * 2


def test_two_runs_asking_the_same_non_answers_again_send_each_once(cache_location: str) -> None:
    """Two runs at once find the same 24 non-answers; each is sent again by one of them, once."""
    requests = _requests(12)
    seed = open_judgment_cache(cache_location)
    seed.store(
        "m", SAMPLING.key(), "seed", [(r.prompt_sha256, _completion("", run)) for r in requests for run in (0, 1)]
    )
    seed.close()
    sent: list[tuple[str, int]] = []
    judges = {tag: ScriptedJudge({f"item-{i}": [""] for i in range(12)}, [], delay_s=0.05) for tag in ("x", "y")}
    results: dict[str, list[CachedCompletion]] = {}
    barrier = threading.Barrier(2)

    def run(tag: str) -> None:
        cache = open_judgment_cache(cache_location)
        cache.count()  # connected before the start
        barrier.wait()
        results[tag] = judge_incrementally(
            judges[tag], "m", requests, SAMPLING, 2, cache, batch_size=2, policy=JudgingPolicy(lease_s=30, poll_s=0.02)
        )
        cache.close()

    threads = [threading.Thread(target=run, args=(tag,)) for tag in judges]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    for judge in judges.values():
        sent.extend(judge.sent)
    # Both did part of the work and no key went out twice, though each stayed a non-answer.
    assert all(judge.sent for judge in judges.values())
    assert len(sent) == 24 and max(Counter(sent).values()) == 1
    with open_judgment_cache(cache_location) as cache:
        stored = cache.lookup("m", SAMPLING.key())
        assert cache.claims() == 0
    assert {row["attempts"] for row in stored.values()} == {2}
    for tag in judges:
        assert {(c.prompt_sha256, c.run): (c.text, c.attempts) for c in results[tag]} == {
            item: (row["text"], row["attempts"]) for item, row in stored.items()
        }
    assert sum(not c.from_cache for tag in judges for c in results[tag]) == 24


# --- caches written before non-answers were kept apart -------------------------------------------

_OLD_SCHEMA = (
    "CREATE TABLE completions (model TEXT NOT NULL, prompt_sha256 TEXT NOT NULL, sampling_key TEXT NOT NULL, "
    "run INTEGER NOT NULL, text TEXT NOT NULL, seed {seed}, latency_s {real} NOT NULL, requested_at TEXT NOT NULL, "
    "completed_at TEXT NOT NULL, backend TEXT NOT NULL, stored_at TEXT NOT NULL, "
    "PRIMARY KEY (model, prompt_sha256, sampling_key, run))"
)
_OLD_ROWS = [("m", "sha", "k", run, text, None, 0.1, "t", "t", "b", "t") for run, text in enumerate(["A", "", " \n"])]


def _old_cache(cache_location: str) -> None:
    if cache_location.startswith("postgresql://"):
        import psycopg

        with psycopg.connect(cache_location) as conn:
            conn.execute(_OLD_SCHEMA.format(seed="BIGINT", real="DOUBLE PRECISION"))
            with conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO completions VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)", _OLD_ROWS
                )
        return
    with sqlite3.connect(cache_location) as conn:
        conn.execute(_OLD_SCHEMA.format(seed="INTEGER", real="REAL") + " WITHOUT ROWID")
        conn.executemany("INSERT INTO completions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", _OLD_ROWS)


def test_an_older_cache_gets_the_columns_and_its_empty_texts_become_non_answers(cache_location: str) -> None:
    _old_cache(cache_location)
    for _ in range(2):  # the second opening finds the columns in place
        with open_judgment_cache(cache_location) as cache:
            rows = cache.lookup("m", "k")
            assert [(rows[("sha", run)]["answered"], rows[("sha", run)]["attempts"]) for run in range(3)] == [
                (True, 1),
                (False, 1),
                (False, 1),
            ]
    with open_judgment_cache(cache_location) as cache:
        assert cache.store("m", "k", "b", [("sha", _completion("B", 1))], again={("sha", 1): 1}) == {("sha", 1)}
        assert cache.store("m", "k", "b", [("sha", _completion("B", 0))], again={("sha", 0): 1}) == set()
        assert cache.lookup("m", "k")[("sha", 1)]["attempts"] == 2


# --- the partition: table and metadata -----------------------------------------------------------

REGISTRY = (
    '[[models]]\nname = "m"\nbackend = "random"\nstudies = ["argument_quality"]\n'
    'scope = { topics = [1], dimensions = ["logic"], strategies = ["zero"], max_comparisons = 6 }\n'
)
ROWS = 6 * 3  # comparisons x runs (order ab only)
SCRIPT: dict[str, list] = {}
SENT: list[tuple[str, int]] = []
ASKED: Counter = Counter()


class ScriptedJudgeResource(JudgeResource):
    def build(self, entry: ModelEntry) -> ScriptedJudge:
        return ScriptedJudge(SCRIPT, SENT, ASKED)


def _materialize(tmp_path: Path, database: Path, cache: str, succeeds: bool = True) -> dict:
    """The partition's metadata; the run fails (after writing the table) when requests came back
    without an answer, and only then (issue 21, part 6)."""
    (tmp_path / "models.toml").write_text(REGISTRY, encoding="utf-8")
    with dg.instance_for_test() as instance:
        add_partitions(instance, ["m"])
        result = dg.materialize(
            [judgments.aq_judgments, *UPSTREAM],
            selection=dg.AssetSelection.assets(judgments.aq_judgments),
            resources={
                "io_manager": duckdb_io_manager(str(database)),
                "data": PublishedDataResource(data_dir=str(SAMPLE_DATA_DIR)),
                "webis_source": WebisSourceResource(url=""),
                "registry": ModelRegistryResource(path=str(tmp_path / "models.toml")),
                "judge": ScriptedJudgeResource(),
                "judgment_cache": JudgmentCacheResource(path=cache),
            },
            instance=instance,
            partition_key="m",
            raise_on_error=False,
        )
        assert result.success == succeeds
        if not succeeds:
            [failure] = [e for e in result.all_events if e.event_type == dg.DagsterEventType.STEP_FAILURE]
            assert "came back without an answer" in failure.step_failure_data.error.message
    return {k: v.value for k, v in result.asset_materializations_for_node("aq_judgments")[0].metadata.items()}


def _table(database: Path) -> pd.DataFrame:
    with duckdb.connect(str(database), read_only=True) as con:
        return con.execute("SELECT * FROM main.aq_judgments WHERE judge_model = 'm'").df()


def _first_request_keys(database: Path, n: int) -> list[str]:
    """The request keys of the partition's first ``n`` prompts (order ab), as the scripted judge sees them."""
    with duckdb.connect(str(database), read_only=True) as con:
        rows = con.execute(
            "SELECT prompt_id FROM main.aq_prompts WHERE topic_id = 1 AND dimension = 'logic' "
            "AND strategy = 'zero' ORDER BY comparison_id LIMIT ?",
            [n],
        ).fetchall()
    return [prompt_id + ":ab" for (prompt_id,) in rows]


def _counts(meta: dict) -> tuple[int, ...]:
    return tuple(meta[name] for name in ("completions_sent", "non_answers", "asked_again", "given_up", "invalid"))


def test_partition_counts_non_answers_asks_them_again_and_gives_up(
    tmp_path: Path, upstream_db: Path, cache_location: str
) -> None:
    assert MAX_ATTEMPTS == 3  # the counts below follow three attempts
    database = tmp_path / "argassets.duckdb"
    copy_warehouse(upstream_db, database)
    keys = _first_request_keys(database, 4)
    SCRIPT.clear()
    SCRIPT.update(
        {
            keys[0]: [""],  # never answers
            keys[1]: ["", "B"],
            keys[2]: [" \n", "Tie"],
            keys[3]: [("A", False), "A"],  # a body the backend could not read that happens to say A
        }
    )
    SENT.clear()
    ASKED.clear()

    first = _materialize(tmp_path, database, cache_location, succeeds=False)
    assert _counts(first) == (ROWS, 12, 0, 0, 12) and first["non_answers_this_run"] == 12
    table = _table(database)
    assert int((~table["is_valid"]).sum()) == 12 and table["label"].isna().sum() == 12
    flagged = table[table["comparison_id"] == keys[3].split(":")[0]]
    assert flagged["raw_output"].tolist() == ["A"] * 3 and not flagged["is_valid"].any()
    # Next materialisation: only the 12 non-answers are sent again; three prompts answer now.
    SENT.clear()
    second = _materialize(tmp_path, database, cache_location, succeeds=False)
    assert sorted({key for key, _ in SENT}) == sorted(keys) and len(SENT) == 12
    assert _counts(second) == (12, 3, 12, 0, 3)
    assert int(_table(database)["is_valid"].sum()) == ROWS - 3
    # The prompt that never answers is asked until MAX_ATTEMPTS, then given up and never sent again.
    SENT.clear()
    third = _materialize(tmp_path, database, cache_location, succeeds=False)
    assert SENT == [(keys[0], run) for run in range(3)] and _counts(third) == (3, 3, 3, 3, 3)
    # Nothing sent, nothing new missing: the run succeeds, the partition marked with what was given up.
    SENT.clear()
    fourth = _materialize(tmp_path, database, cache_location)
    assert SENT == [] and _counts(fourth) == (0, 3, 0, 3, 3) and fourth["non_answers_this_run"] == 0
    assert fourth["given_up_warning"].startswith("3 rows hold a non-answer after 3 attempts")
    assert fourth["completions_from_cache"] == ROWS and int(_table(database)["is_valid"].sum()) == ROWS - 3


def test_partition_keeps_invalid_answers_and_does_not_ask_them_again(
    tmp_path: Path, upstream_db: Path, cache_location: str
) -> None:
    """Prose is counted invalid, as the studies report it, and is not a non-answer: nothing re-sent."""
    database = tmp_path / "argassets.duckdb"
    copy_warehouse(upstream_db, database)
    keys = _first_request_keys(database, 2)
    SCRIPT.clear()
    SCRIPT.update({keys[0]: ["I prefer A", "A"], keys[1]: ["A or B", "B"]})  # a second attempt would parse
    SENT.clear()
    ASKED.clear()

    first = _materialize(tmp_path, database, cache_location)
    assert _counts(first) == (ROWS, 0, 0, 0, 6)
    table = _table(database)
    invalid = table[~table["is_valid"]]
    assert sorted(invalid["raw_output"]) == ["A or B"] * 3 + ["I prefer A"] * 3 and invalid["label"].isna().all()
    SENT.clear()
    second = _materialize(tmp_path, database, cache_location)
    assert SENT == [] and _counts(second) == (0, 0, 0, 0, 6)
    assert second["completions_from_cache"] == ROWS
    assert sorted(_table(database).loc[lambda t: ~t["is_valid"], "raw_output"]) == sorted(invalid["raw_output"])
