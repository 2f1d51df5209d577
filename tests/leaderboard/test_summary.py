"""gharuntime.leaderboard.summary: each dataset folder's summary.md, rendered from its results
alone (one row per result, transfer rows apart and labelled, a stable order), written by
`gharuntime leaderboard` beside the results."""

from __future__ import annotations

import dataclasses
import json
import random
from pathlib import Path

from leaderboard_support import leaderboard_cli as _run

from gharuntime.leaderboard import scan
from gharuntime.leaderboard.summary import render_summary


def _rows(text: str) -> dict[str, list[str]]:
    """method -> its cells, for the rows of the own-split table."""
    own = text.split("## Trained on")[1].split("## Transfer")[0]
    rows = [line.strip("| ").split(" | ") for line in own.splitlines() if line.startswith("| ")]
    return {cells[2]: cells for cells in rows[2:]}


def test_the_summary_holds_each_result_s_own_figures(results_dir: Path, tmp_path: Path) -> None:
    r = _run("--results", str(results_dir), "--out", str(tmp_path / "board"))
    assert r.exit_code == 0, r.output
    folder = results_dir / "gharuntime-fixture"
    text = (folder / "summary.md").read_text(encoding="utf-8")
    rows = _rows(text)
    results = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob("*.json"))]
    assert sorted(rows) == sorted(doc["meta"]["method"] for doc in results)
    for doc in results:
        m = doc["metrics"]["duration_s"]
        rmsle, within = m["rmsle"], m["within_2x"]
        cells = rows[doc["meta"]["method"]]
        assert cells[:2] == [doc["dataset"]["config"], doc["track"]]
        assert cells[3] == (f"{rmsle['value']:.3f} [{rmsle['ci_low']:.3f}, {rmsle['ci_high']:.3f}]")
        assert cells[4] == f"{100 * within['value']:.1f}%"
        central = (doc.get("intervals") or {}).get("metrics", {}).get("duration_s", {})
        coverage = (central.get("central") or {}).get("p10-p90", {}).get("coverage")
        assert cells[5] == ("—" if coverage is None else f"{100 * coverage['value']:.1f}%")
        assert cells[6] == f"{doc['counts']['scored']['duration_s']:,}"
    revision = results[0]["dataset"]["revision"]
    assert f"- Dataset revision: `{revision}` (all {len(results)} results)." in text
    # nothing of the machine it was made on: no path, no date
    assert str(results_dir) not in text and str(tmp_path) not in text
    assert "## Transfer" not in text  # no transfer result here


def test_rows_are_ordered_by_table_then_rmsle_whatever_order_they_come_in(
    results_master: Path,
) -> None:
    entries = [e for t in scan(results_master) for e in t.entries]
    text = render_summary("gharuntime-fixture", entries)
    shuffled = list(entries)
    random.Random(3).shuffle(shuffled)
    assert render_summary("gharuntime-fixture", shuffled) == text
    rows = [line for line in text.splitlines() if line.startswith("| temporal")]
    tracks = [line.split(" | ")[1] for line in rows]
    assert tracks == sorted(tracks, key=lambda t: t != "history")  # headline order: history first
    config = [float(line.split(" | ")[3].split()[0]) for line in rows if "| config |" in line]
    assert config == sorted(config)


def test_no_summaries_leaves_the_results_folder_alone(results_dir: Path, tmp_path: Path) -> None:
    before = sorted(p.name for p in (results_dir / "gharuntime-fixture").iterdir())
    r = _run("--results", str(results_dir), "--out", str(tmp_path / "b"), "--no-summaries")
    assert r.exit_code == 0, r.output
    assert sorted(p.name for p in (results_dir / "gharuntime-fixture").iterdir()) == before
    assert "summary.md" not in before


def test_a_coverage_from_uncalibrated_ranges_is_marked_with_why(results_master: Path) -> None:
    """As on the leaderboard: the method's recorded reason (meta.extra.calibration) beside a
    coverage whose ranges were not calibrated on held-out jobs."""
    entries = [e for t in scan(results_master) for e in t.entries]
    ranged = next(e for e in entries if e.result.get("intervals"))
    doc = json.loads(json.dumps(ranged.result))
    why = "no validation split *here*"
    doc["meta"].setdefault("extra", {})["calibration"] = {
        "duration_s": {"method": "none", "why": why}
    }
    marked = dataclasses.replace(ranged, result=doc)
    text = render_summary("gharuntime-fixture", [marked if e is ranged else e for e in entries])
    flagged = [line for line in text.splitlines() if line.startswith("| ") and "†" in line]
    assert len(flagged) == 1 and f"| {ranged.method} |" in flagged[0]
    assert flagged[0].split(" | ")[5].endswith("% †")
    assert (
        f"† ranges not calibrated on held-out jobs ({ranged.method}): no validation split \\*here\\*."
        in text
    )
    assert "†" not in render_summary("gharuntime-fixture", entries)


def test_a_sampled_range_recording_no_calibration_is_marked_as_drawn(
    results_master: Path,
) -> None:
    """A LASER result made before LASER calibrated its ranges holds the draws' P10/P90 and no
    calibration record: its coverage is marked, with that reason; the same result recording a
    split-conformal calibration on validation is not, nor is one that drew a single sample."""
    entries = [e for t in scan(results_master) for e in t.entries]
    ranged = next(e for e in entries if e.result.get("intervals"))

    def render(extra: dict[str, object]) -> str:
        doc = json.loads(json.dumps(ranged.result))
        doc["meta"]["extra"] = extra
        marked = dataclasses.replace(ranged, result=doc)
        return render_summary("gharuntime-fixture", [marked if e is ranged else e for e in entries])

    sampled = {"method_config": {"model": "tiny", "samples": 16}}
    text = render(sampled)
    flagged = [line for line in text.splitlines() if line.startswith("| ") and "†" in line]
    assert len(flagged) == 1 and flagged[0].split(" | ")[5].endswith("% †")
    assert "made before LASER calibrated its ranges on the validation split" in text
    calibrated = {"duration_s": {"method": "split-conformal", "source": "validation"}}
    assert "†" not in render({**sampled, "calibration": calibrated})
    assert "†" not in render({"method_config": {"model": "tiny", "samples": 1}})
    assert "†" not in render({"method_config": {"model": "tiny", "samples": True}})


def test_a_sampled_range_fitted_without_validation_jobs_says_so(results_master: Path) -> None:
    """A LASER result recording no calibration whose fit was asked to validate and found no
    validation job (cross_repo) is marked for the missing split, not told to rerun; one that
    validated, or was never asked to, keeps the made-before reason."""
    entries = [e for t in scan(results_master) for e in t.entries]
    ranged = next(e for e in entries if e.result.get("intervals"))

    def render(config: dict[str, object]) -> str:
        doc = json.loads(json.dumps(ranged.result))
        doc["meta"]["extra"] = {"method_config": {"model": "tiny", "samples": 16, **config}}
        marked = dataclasses.replace(ranged, result=doc)
        return render_summary("gharuntime-fixture", [marked if e is ranged else e for e in entries])

    found_none = render({"validate_every": 645, "training": {"steps": 10}})
    assert "† ranges not calibrated on held-out jobs" in found_none
    assert "no validation split (as in cross\\_repo)" in found_none
    assert "made before LASER calibrated" not in found_none
    validated = render({"validate_every": 530, "training": {"validation_rows": 256}})
    never_asked = render({"validate_every": 0, "training": {"steps": 10}})
    for text in (validated, never_asked):
        assert "made before LASER calibrated its ranges on the validation split" in text
        assert "as in cross" not in text
