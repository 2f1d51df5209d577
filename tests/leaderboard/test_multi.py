"""The multi track on the leaderboard: ranked by its summary over the targets the dataset holds
(the same paired rule), a summary table, a table per target, and the targets left out named."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from leaderboard_support import RESAMPLES

from gharuntime.dataset import load
from gharuntime.eval import evaluate_file, write_result
from gharuntime.leaderboard import LeaderboardError, add_result, load_result, scan
from gharuntime.leaderboard.markdown import render_markdown
from gharuntime.leaderboard.page import render_page
from gharuntime.leaderboard.view import table_views

# method -> log factor of (duration_s, queue_s): prediction = truth × exp(factor)
MULTI = {
    "duration-first": (0.05, np.log(20.0)),  # near-exact durations, waits 20× too long
    "balanced": (np.log(2.5), 0.05),  # durations 2.5× too long, near-exact waits
    "both-close": (0.1, 0.1),
}


def _score(tmp: Path, dataset: Path, method: str, factors: tuple[float, float]) -> Path:
    rows = load(dataset, "temporal", "test")
    sign = np.where(np.arange(rows.height) % 2 == 0, 1.0, -1.0)
    d = rows["duration_s"].to_numpy() * np.exp(factors[0] * np.where(factors[0] > 0.5, 1, sign))
    q = rows["queue_s"].to_numpy() * np.exp(factors[1] * np.where(factors[1] > 0.5, 1, sign))
    sub = tmp / f"{method}.jsonl"
    sub.write_text(
        "".join(
            json.dumps({"id": i, "duration_s": round(float(a), 2), "queue_s": round(float(b), 2)})
            + "\n"
            for i, a, b in zip(rows["id"].to_list(), d, q, strict=True)
        )
    )
    meta = {"method": method, "method_version": "1.0", "track": "multi", "config": "temporal"}
    (tmp / f"{method}.meta.json").write_text(json.dumps(meta))
    out = tmp / f"{method}.result.json"
    write_result(evaluate_file(sub, dataset, resamples=RESAMPLES), out)
    return out


@pytest.fixture(scope="module")
def multi_results(no_logs_dataset: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("multi")
    dataset = tmp / "gharuntime-nologs"  # its folder name is its name on the leaderboard
    shutil.copytree(no_logs_dataset, dataset)
    results = tmp / "results"
    for method, factors in MULTI.items():
        add_result(_score(tmp, dataset, method, factors), results)
    return results


def test_a_multi_table_is_ranked_by_its_summary(multi_results: Path) -> None:
    (view,) = table_views(scan(multi_results))
    order = [r.entry.method for r in view.ranked]
    # by duration_s alone duration-first would lead; over both targets it comes last
    by_duration = sorted(view.rows, key=lambda r: r["rmsle"])
    assert by_duration[0]["method"] == "duration-first"
    assert order == ["both-close", "balanced", "duration-first"]
    summaries = [r.entry.result["summary"]["metrics"]["rmsle"]["value"] for r in view.ranked]
    assert summaries == sorted(summaries)
    assert [r.group for r in view.ranked] == [1, 2, 3]  # far apart: three groups
    assert view.targets == ("duration_s", "queue_s")
    assert "holds no value of it" in view.left_out["log_bytes"]


def test_the_markdown_has_a_summary_and_a_table_per_target(multi_results: Path) -> None:
    views = table_views(scan(multi_results))
    text = render_markdown(views, "results")
    assert "## gharuntime-nologs · temporal / multi" in text
    assert "- `log_bytes` left out, not scored: the dataset holds no value of it" in text
    summary = text.split("### Multi summary")[1].split("### `duration_s`")[0]
    assert (
        "| group | method | version | mean RMSLE ↓ | mean within 2× ↑ | duration_s RMSLE ↓ |"
        in summary
    )
    rows = [line for line in summary.splitlines() if line.startswith("| ") and "---" not in line]
    assert [r.split(" | ")[1] for r in rows[1:]] == ["both-close", "balanced", "duration-first"]
    for target in ("duration_s", "queue_s"):
        block = text.split(f"### `{target}`")[1].split("###")[0]
        lines = [line for line in block.splitlines() if line.startswith("| ")]
        assert "RMSLE ↓ | MAE (s) ↓" in lines[0]
        # the rows keep the table's order and groups, with this target's own values
        assert [x.split(" | ")[:2] for x in lines[2:]] == [
            ["| 1", "both-close"],
            ["| 2", "balanced"],
            ["| 3", "duration-first"],
        ]
    assert "### `log_bytes`" not in text


def test_the_page_has_a_row_per_method_and_target(multi_results: Path) -> None:
    views = table_views(scan(multi_results))
    page = render_page(views, "results")
    data = json.loads(page.split('id="leaderboard-data">')[1].split("</script>")[0])
    rows = data["rows"]
    assert [(r["method"], r["target"]) for r in rows] == [
        (m, t)
        for t in ("duration_s", "queue_s")
        for m in ("both-close", "balanced", "duration-first")
    ]
    for r in rows:  # each row carries its method's summary
        summary = views[0].target_rows["duration_s"][
            [x["method"] for x in rows[:3]].index(r["method"])
        ]
        assert r["summary_rmsle"] == summary["summary_rmsle"] is not None


def _doc(results: Path) -> dict[str, Any]:
    return load_result(sorted(results.glob("*/*.json"))[0]).result


def test_a_multi_result_without_its_summary_is_refused(multi_results: Path, tmp_path: Path) -> None:
    doc = copy.deepcopy(_doc(multi_results))
    del doc["summary"]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(LeaderboardError, match="a multi result without `targets` and `summary`"):
        load_result(path)


def test_a_multi_result_whose_blocks_miss_a_scored_target_is_refused(
    multi_results: Path, tmp_path: Path
) -> None:
    doc = copy.deepcopy(_doc(multi_results))
    del doc["metrics"]["queue_s"]
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(LeaderboardError, match="metrics holds duration_s, but targets/scored"):
        load_result(path)


def test_results_scoring_other_targets_do_not_share_a_table(
    multi_results: Path, tmp_path: Path
) -> None:
    results = tmp_path / "results"
    shutil.copytree(multi_results, results)
    path = sorted(results.glob("*/*.json"))[0]
    doc = json.loads(path.read_text())
    doc["targets"]["scored"] = doc["summary"]["targets"] = ["duration_s"]
    for block in (doc["metrics"], doc["counts"]["scored"], doc["bootstrap"]["per_resample"]):
        del block["queue_s"]
    path.write_text(json.dumps(doc))
    with pytest.raises(
        LeaderboardError, match=r"targets duration_s, queue_s differs from .* \(duration_s\)"
    ):
        scan(results)


def test_each_target_table_has_its_own_recency_coverage_and_dagger(
    no_logs_dataset: Path, tmp_path: Path
) -> None:
    """On multi, ranges are per target: each target's table is followed by that target's
    coverage by recency and the † of the targets whose ranges were not calibrated."""
    dataset = tmp_path / "gharuntime-nologs"
    shutil.copytree(no_logs_dataset, dataset)
    results = tmp_path / "results"
    for method, factors in MULTI.items():
        result = _score(tmp_path, dataset, method, factors)
        if method == "both-close":  # ranges: wide on duration_s, far too narrow on queue_s
            sub = tmp_path / f"{method}.jsonl"
            lines = []
            for line in sub.read_text().splitlines():
                rec = json.loads(line)
                row: dict[str, Any] = {"id": rec["id"]}
                for target, spread in (("duration_s", 1.0), ("queue_s", 1e-6)):
                    p = float(rec[target])
                    for q, k in (("p10", -1), ("p50", 0), ("p90", 1)):
                        row[f"{target}_{q}"] = round(p * float(np.exp(k * spread)), 2)
                lines.append(json.dumps(row))
            sub.with_name(f"{method}.quantiles.jsonl").write_text("\n".join(lines) + "\n")
            meta = json.loads((tmp_path / f"{method}.meta.json").read_text())
            meta["calibration"] = {"queue_s": {"method": "none", "why": "no waits held out"}}
            (tmp_path / f"{method}.meta.json").write_text(json.dumps(meta))
            write_result(evaluate_file(sub, dataset, resamples=RESAMPLES), result)
        add_result(result, results)
    text = render_markdown(table_views(scan(results)), "results")
    blocks = {t: text.split(f"### `{t}`")[1].split("###")[0] for t in ("duration_s", "queue_s")}
    for target, block in blocks.items():
        recency = block.split("by how recently the job's group")[1]
        row = next(line for line in recency.splitlines() if line.startswith("| both-close |"))
        cells = [c.strip() for c in row.strip("|").split("|")[1:]]
        assert cells and all(c.endswith("%") for c in cells), row
        shares = [float(c.rstrip("%")) for c in cells]
        # this target's own ranges: the wide ones hold every duration, the narrow few waits
        assert all(s == 100 for s in shares) if target == "duration_s" else max(shares) < 50
    dagger = "† ranges not calibrated on held-out jobs (both-close): no waits held out."
    assert dagger in blocks["queue_s"] and "†" not in blocks["duration_s"]
    flagged = [line for line in blocks["queue_s"].splitlines() if "†" in line and "| " in line]
    assert len(flagged) == 1 and "| both-close |" in flagged[0]
    page = render_page(table_views(scan(results)), "results")
    assert "† both-close (queue_s): ranges not calibrated on held-out jobs: no waits" in page


def _ranged(tmp: Path, dataset: Path, method: str, spread: float) -> Path:
    """A multi submission on the test split with P10/P50/P90 at ×exp(∓spread) of each truth
    (so every range holds its job), scored."""
    rows = load(dataset, "temporal", "test")
    lines, ranges = [], []
    for i, d, q in zip(rows["id"], rows["duration_s"], rows["queue_s"], strict=True):
        lines.append(json.dumps({"id": i, "duration_s": float(d), "queue_s": float(q)}))
        row: dict[str, Any] = {"id": i}
        for target, value in (("duration_s", float(d)), ("queue_s", float(q))):
            for level, k in (("p10", -1), ("p50", 0), ("p90", 1)):
                row[f"{target}_{level}"] = round(value * float(np.exp(k * spread)), 3)
        ranges.append(json.dumps(row))
    sub = tmp / f"{method}.jsonl"
    sub.write_text("\n".join(lines) + "\n")
    sub.with_name(f"{method}.quantiles.jsonl").write_text("\n".join(ranges) + "\n")
    meta = {"method": method, "method_version": "1.0", "track": "multi", "config": "temporal"}
    sub.with_name(f"{method}.meta.json").write_text(json.dumps(meta))
    out = tmp / f"{method}.result.json"
    write_result(evaluate_file(sub, dataset, resamples=RESAMPLES), out)
    return out


def test_a_target_that_moved_between_splits_is_marked_beside_its_coverage(
    shifted_waits_dataset: Path, tmp_path: Path
) -> None:
    """Where the test split's waits left the validation split's own P10–P90 (a dataset whose
    test jobs wait a hundredth as long), every coverage on queue_s carries ‡ and the sentence
    with the figures says why no range calibrated on validation is expected to hold 80%;
    duration_s, which did not move, carries none. The same in the page."""
    dataset = tmp_path / "gharuntime-shifted"
    shutil.copytree(shifted_waits_dataset, dataset)
    results = tmp_path / "results"
    for method, spread in (("wide", 0.5), ("narrower", 0.3)):
        add_result(_ranged(tmp_path, dataset, method, spread), results)
    shift = json.loads((tmp_path / "wide.result.json").read_text())["dataset"]["split_shift"]
    views = table_views(scan(results))
    text = render_markdown(views, "results")
    blocks = {t: text.split(f"### `{t}`")[1].split("###")[0] for t in ("duration_s", "queue_s")}
    table = [line for line in blocks["queue_s"].splitlines() if line.startswith("| 1 ")]
    table += [line for line in blocks["queue_s"].splitlines() if line.startswith("| 2 ")]
    assert len(table) == 2 and all("100.0% [100.0%, 100.0%] ‡" in line for line in table)
    q = shift["queue_s"]
    note = next(line for line in blocks["queue_s"].splitlines() if line.startswith("‡ "))
    assert note.startswith(
        "‡ queue\\_s moved between the validation and test splits: the validation split's own "
        "P10–P90 ("
    )
    assert (
        f"holds {100 * q['inside']:.1f}% of the test jobs ({100 * q['below']:.1f}% below it, "
        f"{100 * q['above']:.1f}% above; 80% when nothing moves), so ranges calibrated on "
        "validation jobs are not expected to hold 80% here."
    ) in note
    assert q["below"] > 0.5  # the waits moved down, as the dataset was made
    assert "‡" not in blocks["duration_s"] and 0.7 <= shift["duration_s"]["inside"] <= 0.9
    page = render_page(views, "results")
    assert page.count('<span class="moved"') == 2  # the two queue_s coverages
    assert '<p class="note">‡ queue_s moved between the validation and test splits' in page


def test_moved_says_nothing_inside_the_band_or_for_a_result_without_the_figure() -> None:
    from gharuntime.leaderboard.view import MOVED_BAND, moved

    def result(inside: Any) -> dict[str, Any]:
        block = {"p10": 9.0, "p90": 3066.5, "inside": inside, "below": 0.2, "above": 0.1}
        return {"dataset": {"split": "test", "split_shift": {"queue_s": block}}}

    assert moved(result(MOVED_BAND[0]), "queue_s") == moved(result(MOVED_BAND[1]), "queue_s") == ""
    assert moved(result(0.69), "queue_s").startswith(
        "queue_s moved between the validation and test"
    )
    assert "(9 s to 3,066 s) holds 91.0% of the test jobs" in moved(result(0.91), "queue_s")
    assert moved(result(0.5), "duration_s") == ""  # another target's figure
    assert moved(result("0.5"), "queue_s") == moved(result(True), "queue_s") == ""
    assert moved({"dataset": {}}, "queue_s") == ""
