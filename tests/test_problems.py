"""The one problem log: eval's checks and the sources' record counts go into the same type,
and each report (eval's problems, a build's counts and examples) reads the same way it did."""

from __future__ import annotations

from gharuntime.eval import ProblemLog as EvalProblemLog
from gharuntime.problems import KEEP_UNKNOWN_IDS, Problem, ProblemLog
from gharuntime.sources._columns import Problems


def test_sources_and_eval_share_one_type() -> None:
    assert Problems is ProblemLog and EvalProblemLog is ProblemLog


def test_a_checked_file_keeps_every_problem_with_its_line() -> None:
    log = ProblemLog()
    assert not log
    log.add("not_json", "preds.jsonl", "not JSON", 3)
    log.add("metadata", "preds.jsonl", "no track declared")
    assert log.total == 2 and bool(log)
    assert [str(p) for p in log.kept] == [
        "preds.jsonl:3: not JSON",
        "preds.jsonl: no track declared",
    ]
    assert log.to_json() == {
        "counts": {"not_json": 1, "metadata": 1},
        "problems": [
            {"kind": "not_json", "where": "preds.jsonl", "line": 3, "message": "not JSON"},
            {
                "kind": "metadata",
                "where": "preds.jsonl",
                "line": None,
                "message": "no track declared",
            },
        ],
    }


def test_counted_records_report_counts_and_five_examples_sorted_by_kind() -> None:
    log = ProblemLog()
    for i in range(8):
        log.add("unreadable_record", f"shard {i}: bad")
    log.add("truncated_shard", "s.jsonl.gz", n=40)  # one example for 40 lost records
    log.add("duplicate_run_record", n=3)  # counted, no example
    assert log.counts["unreadable_record"] == 8 and log.counts["nothing_of_this"] == 0
    assert log.as_dict() == {
        "counts": {"duplicate_run_record": 3, "truncated_shard": 40, "unreadable_record": 8},
        "examples": {
            "truncated_shard": ["s.jsonl.gz"],
            "unreadable_record": [f"shard {i}: bad" for i in range(5)],
        },
    }


def test_texts_are_capped_per_kind_and_counts_stay_exact() -> None:
    log = ProblemLog()
    for i in range(KEEP_UNKNOWN_IDS + 5):
        log.add("unknown_id", "p.jsonl", f"id {i}", i + 1)
    log.add_count("unknown_id", 100)
    assert log.counts["unknown_id"] == KEEP_UNKNOWN_IDS + 105
    assert len(log.kept) == KEEP_UNKNOWN_IDS


def test_extend_adds_the_other_logs_counts_and_texts() -> None:
    a, b = ProblemLog(), ProblemLog()
    a.add("not_json", "a.jsonl", "not JSON", 1)
    b.add("not_json", "b.jsonl", "not JSON", 2)
    b.add_count("missing_records", 4)
    a.extend(b)
    assert a.counts == {"not_json": 2, "missing_records": 4}
    assert a.kept == [
        Problem("not_json", "a.jsonl", "not JSON", 1),
        Problem("not_json", "b.jsonl", "not JSON", 2),
    ]
