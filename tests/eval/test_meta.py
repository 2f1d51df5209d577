"""Method metadata: sidecar files, options, and the inputs a track allows."""

from __future__ import annotations

import json
from pathlib import Path

from gharuntime.eval.meta import MethodMeta, check_meta, merge_meta, read_sidecar
from gharuntime.problems import ProblemLog


def test_sidecar_fields_are_read_and_extra_keys_kept(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text(
        json.dumps({"method": "lgbm", "track": "config", "inputs": ["repo"], "seed": 3, "url": "u"})
    )
    log = ProblemLog()
    fields = read_sidecar(path, log)
    assert not log
    assert fields["inputs"] == ("repo",) and fields["seed"] == 3
    assert fields["extra"] == {"url": "u"}


def test_sidecar_with_wrong_types_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"method": 5, "inputs": "repo", "seed": "x"}))
    log = ProblemLog()
    read_sidecar(path, log)
    assert log.counts["metadata"] == 3


def test_unreadable_sidecar_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text("{oops")
    log = ProblemLog()
    read_sidecar(path, log)
    assert "unreadable" in log.kept[0].message


def test_options_override_the_method_name() -> None:
    log = ProblemLog()
    meta = merge_meta({"method": "a", "track": "config"}, {"method": "b"}, log, "s")
    assert meta.method == "b" and meta.track == "config" and not log


def test_options_that_contradict_the_track_are_a_problem() -> None:
    log = ProblemLog()
    merge_meta({"track": "config"}, {"track": "multi"}, log, "s")
    assert log.counts["metadata"] == 1


def test_history_input_is_forbidden_on_the_config_track() -> None:
    log = ProblemLog()
    check_meta(MethodMeta(track="config", inputs=("repo", "history_duration_s")), log, "s")
    assert log.counts["forbidden_input"] == 1
    assert "allowed on history" in log.kept[0].message


def test_history_input_is_allowed_on_the_history_track() -> None:
    log = ProblemLog()
    check_meta(MethodMeta(track="history", inputs=("repo", "history_duration_s")), log, "s")
    assert not log


def test_targets_and_meta_columns_are_never_inputs() -> None:
    log = ProblemLog()
    check_meta(MethodMeta(track="multi", inputs=("duration_s", "started_at", "nope")), log, "s")
    assert log.counts["forbidden_input"] == 3


def test_a_track_must_be_declared() -> None:
    log = ProblemLog()
    check_meta(MethodMeta(method="x"), log, "s")
    assert "no track declared" in log.kept[0].message
