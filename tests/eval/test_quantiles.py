"""The quantile sidecar: checked like the submission (every problem with its line, exit 2) and
scored by eval with the same repository resamples as the point metrics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner

from gharuntime.cli.main import cli
from gharuntime.dataset import load
from gharuntime.eval import InvalidSubmission, evaluate_file
from gharuntime.eval.quantiles import QuantileLevels, level_name
from gharuntime.eval.submission_files import SubmissionFiles

LEVELS = {"p10": -0.5, "p50": 0.0, "p90": 0.5, "p99": 1.2}  # log offsets from the truth × 1.2


@pytest.fixture()
def truth(fixture_dataset_master: Path) -> tuple[list[str], np.ndarray, np.ndarray]:
    rows = load(fixture_dataset_master, "temporal", "test")
    return (
        rows["id"].to_list(),
        rows["duration_s"].to_numpy().astype(float),
        rows["repo_id"].to_numpy(),
    )


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _pair(tmp: Path, ids: list[str], y: np.ndarray, name: str = "preds") -> tuple[Path, Path]:
    """A submission predicting 1.2 × truth, and a sidecar of fixed log offsets around it; the
    offsets alternate in sign per record so the coverage is known exactly."""
    sub = _write(
        tmp / f"{name}.jsonl",
        [{"id": i, "duration_s": round(1.2 * v, 1)} for i, v in zip(ids, y, strict=True)],
    )
    side = []
    for k, (i, v) in enumerate(zip(ids, y, strict=True)):
        centre = 1.2 * v if k % 2 else 3.0 * v  # every other record's range sits high
        side.append(
            {
                "id": i,
                **{f"duration_s_{q}": round(centre * np.exp(o), 3) for q, o in LEVELS.items()},
            }
        )
    return sub, _write(SubmissionFiles(sub).quantiles, side)


def _problems(exc: pytest.ExceptionInfo[InvalidSubmission]) -> list[tuple[str, int | None]]:
    return [(p.kind, p.line) for p in exc.value.problems.kept]


def test_the_sidecar_sits_beside_the_submission() -> None:
    assert SubmissionFiles(Path("runs/a.jsonl")).quantiles == Path("runs/a.quantiles.jsonl")
    assert level_name(10.0) == "p10" and level_name(2.5) == "p2.5"
    levels = QuantileLevels((2.5, 10.0, 50.0, 90.0, 97.5, 99.0))
    assert [levels.interval_name(p) for p in levels.central] == ["p2.5-p97.5", "p10-p90"]
    assert [levels.nominal(p) for p in levels.central] == pytest.approx([0.95, 0.8])


def test_coverage_width_pinball_and_calibration_are_scored(
    fixture_dataset_master: Path, tmp_path: Path, truth: tuple[list[str], np.ndarray, np.ndarray]
) -> None:
    ids, y, _ = truth
    sub, side = _pair(tmp_path, ids, y)
    result = evaluate_file(sub, fixture_dataset_master, options={"track": "config"}, resamples=200)
    block = result["intervals"]["metrics"]["duration_s"]
    assert result["intervals"]["levels"] == ["p10", "p50", "p90", "p99"]
    # the expected values, computed here from the files (not by the code under test)
    rows = [json.loads(x) for x in side.read_text().splitlines()]
    q = {lv: np.array([r[f"duration_s_{lv}"] for r in rows]) for lv in LEVELS}
    inside = (q["p10"] <= y) & (y <= q["p90"])
    central = block["central"]["p10-p90"]
    assert central["nominal"] == pytest.approx(0.8)
    assert central["coverage"]["value"] == pytest.approx(inside.mean())
    assert central["coverage_error"]["value"] == pytest.approx(abs(inside.mean() - 0.8))
    width = np.log1p(q["p90"]) - np.log1p(q["p10"])
    assert central["log_width"]["value"] == pytest.approx(width.mean())
    for lv, tau in (("p10", 0.1), ("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
        d = np.log1p(y) - np.log1p(q[lv])
        pinball = np.where(d >= 0, tau * d, (tau - 1) * d).mean()
        assert block["levels"][lv]["pinball"]["value"] == pytest.approx(pinball)
        assert block["levels"][lv]["calibration"]["value"] == pytest.approx((y <= q[lv]).mean())
        assert block["levels"][lv]["nominal"] == pytest.approx(tau)
    for est in (central["coverage"], central["log_width"], block["mean_pinball"]):
        assert est["ci_low"] <= est["value"] <= est["ci_high"]
    assert len(result["intervals"]["per_resample"]["duration_s"]["coverage:p10-p90"]) == 200
    assert result["interval_metric_definitions"]["coverage"]["higher_is_better"] is None
    # the point metrics are what they are without a sidecar
    side.unlink()
    plain = evaluate_file(sub, fixture_dataset_master, options={"track": "config"}, resamples=200)
    assert plain["metrics"] == result["metrics"] and plain["intervals"] is None


def test_vs_compares_two_sidecars_on_the_same_resamples(
    fixture_dataset_master: Path, tmp_path: Path, truth: tuple[list[str], np.ndarray, np.ndarray]
) -> None:
    ids, y, _ = truth
    a, _ = _pair(tmp_path, ids, y, "a")
    b, b_side = _pair(tmp_path, ids, y, "b")
    wide = []
    for line in b_side.read_text().splitlines():  # B: the same centres, twice as wide in log
        r = json.loads(line)
        mid = r["duration_s_p50"]
        wide.append(
            {
                "id": r["id"],
                **{f"duration_s_{q}": round(mid * np.exp(2 * o), 3) for q, o in LEVELS.items()},
            }
        )
    _write(b_side, wide)
    result = evaluate_file(
        a, fixture_dataset_master, options={"track": "config"}, vs=b, resamples=200
    )
    diff = result["comparison"]["intervals_difference"]["duration_s"]
    ra = np.array(result["intervals"]["per_resample"]["duration_s"]["log_width:p10-p90"])
    rb = np.array(
        result["comparison"]["intervals"]["per_resample"]["duration_s"]["log_width:p10-p90"]
    )
    assert diff["log_width:p10-p90"]["value"] < 0  # A is narrower
    low, high = np.quantile(ra - rb, [0.025, 0.975])
    assert diff["log_width:p10-p90"]["ci_low"] == pytest.approx(low, rel=1e-5)
    assert diff["log_width:p10-p90"]["ci_high"] == pytest.approx(high, rel=1e-5)


def test_every_problem_of_the_sidecar_is_reported_with_its_line(
    fixture_dataset_master: Path, tmp_path: Path, truth: tuple[list[str], np.ndarray, np.ndarray]
) -> None:
    ids, y, _ = truth
    sub, side = _pair(tmp_path, ids, y)
    rows = [json.loads(x) for x in side.read_text().splitlines()]
    rows[2]["duration_s_p90"] = rows[2]["duration_s_p10"] / 2  # line 3: p50 > p90
    rows[4]["duration_s_p10"] = -1.0  # line 5: negative
    rows[5]["duration_s_p50"] = "fast"  # line 6: not a number
    del rows[7]["duration_s_p99"]  # line 8: a level missing
    rows[9]["id"] = "not-a-record"  # line 10: unknown id (and so record 10 has no quantiles)
    _write(side, rows)
    with pytest.raises(InvalidSubmission) as exc:
        evaluate_file(sub, fixture_dataset_master, options={"track": "config"}, resamples=10)
    got = _problems(exc)
    assert ("not_monotone", 3) in got
    assert ("bad_value", 5) in got and ("bad_value", 6) in got and ("bad_value", 8) in got
    assert ("unknown_id", 10) in got
    assert ("missing_quantiles", None) in got
    where = {p.where for p in exc.value.problems.kept}
    assert where == {str(side)}


def test_too_few_levels_are_refused(
    fixture_dataset_master: Path, tmp_path: Path, truth: tuple[list[str], np.ndarray, np.ndarray]
) -> None:
    ids, y, _ = truth
    sub, side = _pair(tmp_path, ids, y)
    rows = [json.loads(x) for x in side.read_text().splitlines()]
    _write(side, [{k: v for k, v in r.items() if k != "duration_s_p50"} for r in rows])
    with pytest.raises(InvalidSubmission) as exc:
        evaluate_file(sub, fixture_dataset_master, options={"track": "config"}, resamples=10)
    kinds = {k for k, _ in _problems(exc)}
    assert "quantile_levels" in kinds


def test_the_cli_scores_the_sidecar_and_exits_2_on_a_bad_one(
    fixture_dataset_master: Path, tmp_path: Path, truth: tuple[list[str], np.ndarray, np.ndarray]
) -> None:
    ids, y, _ = truth
    sub, side = _pair(tmp_path, ids, y)
    base = [
        str(sub),
        "--dataset",
        str(fixture_dataset_master),
        "--track",
        "config",
        "--resamples",
        "50",
    ]
    ok = CliRunner().invoke(cli, ["eval", *base])
    assert ok.exit_code == 0, ok.output
    assert "p10-p90 coverage" in ok.output and "share at or below" in ok.output
    moved = side.rename(tmp_path / "elsewhere.jsonl")
    named = CliRunner().invoke(cli, ["eval", *base, "--quantiles", str(moved), "--json"])
    assert named.exit_code == 0, named.output
    named_path = json.loads(named.output)["intervals"]["sidecar"]["path"]
    # relative to where it was scored, naming the same file
    assert not Path(named_path).is_absolute() and (Path.cwd() / named_path).resolve() == moved
    lines = moved.read_text().splitlines()
    lines[0] = lines[0].replace('"duration_s_p10": ', '"duration_s_p10": -')
    moved.write_text("\n".join(lines) + "\n")
    bad = CliRunner().invoke(cli, ["eval", *base, "--quantiles", str(moved)])
    assert bad.exit_code == 2 and "Traceback" not in bad.output
    assert f"{moved}:1" in bad.output and "negative" in bad.output
    missing = CliRunner().invoke(cli, ["eval", *base, "--quantiles", str(tmp_path / "nope.jsonl")])
    assert missing.exit_code == 2 and "no such quantile sidecar" in missing.output
