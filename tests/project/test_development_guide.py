"""docs/maintainer/development.md, executed: each recipe (a method, a metric, a source kind, a
command) is followed as the page writes it, in a copy of the package (tests/guide_support.py),
and what it adds is run through the command line in a fresh interpreter; each touches no more
files than its heading says."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from guide_support import follow, invoke

from gharuntime.dataset import load


def _files(edits: list) -> set[str]:  # type: ignore[type-arg]
    return {e.path for e in edits}


def test_a_method_is_its_module_and_one_registry_entry(
    fixture_dataset_master: Path, tmp_path: Path
) -> None:
    edits = follow("Add a method", tmp_path / "pkg")
    assert _files(edits) == {"baselines/train_quantile.py", "baselines/methods.py"}
    ds = str(fixture_dataset_master)
    run = ["baseline", "train-quantile", "--dataset", ds, "--out", "q.jsonl"]
    done = invoke(
        tmp_path / "pkg",
        [
            [*run, "--param", "q=0.9"],
            ["baseline", "--help"],
            [*run, "--param", "qq=0.9"],
            [*run, "--param", "q=2"],
            [*run, "--param", "q=high"],
        ],
        tmp_path,
    )
    fitted, helped, unknown, high, text = done
    assert fitted["code"] == 0, fitted["output"]
    # its prediction: the training split's 0.9 quantile of duration_s, for every job
    train = load(fixture_dataset_master, "temporal", "train")["duration_s"].to_numpy()
    want = float(np.quantile(train[np.isfinite(train)], 0.9))
    lines = [json.loads(line) for line in (tmp_path / "q.jsonl").read_text().splitlines()]
    assert len(lines) == load(fixture_dataset_master, "temporal", "test").height
    (value,) = {line["duration_s"] for line in lines}  # one value (written to 0.1 s)
    assert abs(value - want) <= 0.05
    meta = json.loads((tmp_path / "q.meta.json").read_text())
    assert meta["method"] == "train-quantile" and meta["method_config"] == {"q": 0.9}
    # listed, its parameter with its default; refused before any data is read
    assert helped["code"] == 0 and "train-quantile" in helped["output"]
    assert "q=0.5" in helped["output"]
    assert unknown["code"] == 2 and "unknown parameter(s) qq (did you mean q?)" in unknown["output"]
    assert high["code"] == 2 and "q must be ≥ 0 and ≤ 1" in high["output"]
    assert text["code"] == 2 and "q must be a number" in text["output"]


def _submission(dataset: Path, path: Path) -> tuple[np.ndarray, np.ndarray]:
    rows = load(dataset, "temporal", "test")
    y = rows["duration_s"].to_numpy().astype(np.float64)
    p = np.round(y * 1.7 + 3.0, 2)
    path.write_text(
        "".join(
            json.dumps({"id": i, "duration_s": float(v)}) + "\n"
            for i, v in zip(rows["id"], p, strict=True)
        )
    )
    return y, p


def test_a_metric_is_one_registry_entry(fixture_dataset_master: Path, tmp_path: Path) -> None:
    edits = follow("Add a metric", tmp_path / "pkg")
    assert _files(edits) == {"gharuntime/eval/metrics.py"}
    y, p = _submission(fixture_dataset_master, tmp_path / "p.jsonl")
    ds = str(fixture_dataset_master)
    scored, helped, gold = invoke(
        tmp_path / "pkg",
        [
            ["eval", "p.jsonl", "--dataset", ds, "--track", "config", "--out", "r.json"],
            ["eval", "--help"],
            ["eval", "--gold", "--dataset", ds, "--resamples", "20"],
        ],
        tmp_path,
    )
    assert scored["code"] == 0, scored["output"]
    result = json.loads((tmp_path / "r.json").read_text())
    msle = result["metrics"]["duration_s"]["msle"]
    # by hand: the mean squared difference of the log1p values
    assert math.isclose(msle["value"], float(np.mean((np.log1p(p) - np.log1p(y)) ** 2)))
    assert msle["ci_low"] <= msle["value"] <= msle["ci_high"]
    assert "MSLE" in scored["output"]  # the report's table
    listed = " ".join(helped["output"].split("Metrics per target:")[1].split(";")[0].split())
    assert listed.split(", ")[-1] == "MSLE"  # eval --help's list, from the registry
    assert gold["code"] == 0, gold["output"]  # the ground truth scores its `perfect`, 0


def test_a_source_kind_is_one_module(tmp_path: Path) -> None:
    from gharuntime.sim.dump import dump_world
    from gharuntime.sim.world import Scale, World

    edits = follow("Add a source kind", tmp_path / "pkg")
    assert _files(edits) == {"gharuntime/source_kinds/archive.py"}
    world = World(3, Scale(3, 1.0, 3.0, 30))
    dump_world(world, tmp_path / "archive" / "day-1", logs=False, workers=1)
    (tmp_path / "empty").mkdir()
    built, helped, plain, empty, unused = invoke(
        tmp_path / "pkg",
        [
            ["build", "--source", "archive", "--archive", "archive", "--out", "ds", "--json"],
            ["build", "--help"],
            ["build", "--raw", "archive/day-1", "--out", "plain"],
            ["build", "--source", "archive", "--archive", "empty", "--out", "none"],
            ["build", "--source", "archive", "--archive", "archive", "--seed", "3"],
        ],
        tmp_path,
    )
    assert built["code"] == 0 and plain["code"] == 0, built["output"] + plain["output"]
    manifest = json.loads((tmp_path / "ds" / "manifest.json").read_text())
    assert manifest["source"]["kind"] == "archive" and manifest["source"]["archive"] == "archive"
    same = json.loads((tmp_path / "plain" / "manifest.json").read_text())
    assert manifest["rows"] == same["rows"] > 0  # the same store read as --source raw
    card = (tmp_path / "ds" / "README.md").read_text()
    assert "The stores are those of the archive `archive`." in card
    # --source lists it after the five kinds, --help shows its option
    listed = " ".join(helped["output"].split())
    assert "[raw|ghalogs|api-json|simulated|github|archive]" in listed
    assert "--archive" in listed and "archive: every raw store in one folder" in listed
    assert empty["code"] == 2 and "--archive: --source archive takes a folder" in empty["output"]
    assert unused["code"] == 2 and "--seed: --source archive does not use it" in unused["output"]


def test_a_command_is_its_module_and_one_registry_entry(
    fixture_dataset_master: Path, tmp_path: Path
) -> None:
    edits = follow("Add a command", tmp_path / "pkg")
    assert _files(edits) == {"gharuntime/cli/splits.py", "gharuntime/cli/main.py"}
    (tmp_path / "not-a-dataset").mkdir()
    said, helped, refused = invoke(
        tmp_path / "pkg",
        [
            ["splits", str(fixture_dataset_master)],
            ["--help"],
            ["splits", "not-a-dataset"],
        ],
        tmp_path,
    )
    assert said["code"] == 0, said["output"]
    for config in ("temporal", "cross_repo"):
        counts = [load(fixture_dataset_master, config, s).height for s in ("train", "validation")]
        test = load(fixture_dataset_master, config, "test").height
        assert (
            f"{config}: train {counts[0]:,}, validation {counts[1]:,}, test {test:,}"
            in (said["output"])
        )
    assert "splits" in helped["output"] and "Say how many jobs" in helped["output"]
    assert refused["code"] == 2 and "not a dataset folder" in refused["output"]
    assert "Traceback" not in refused["output"]


@pytest.mark.parametrize(
    ("heading", "most"),
    [("Add a method", 2), ("Add a metric", 1), ("Add a source kind", 1), ("Add a command", 2)],
)
def test_each_recipe_names_the_files_it_touches(heading: str, most: int) -> None:
    """A method in two files, a metric in one (and the schema for a headline one), a source
    kind in one; every file a recipe's code goes to is named in its text."""
    from guide_support import GUIDE, recipe

    edits = recipe(heading)
    assert edits and len(_files(edits)) <= most
    text = GUIDE.read_text(encoding="utf-8")
    start = text.index(f"\n## {heading}\n")
    section = text[start : text.find("\n## ", start + 1)]
    prose = "".join(section.split("```")[::2])  # the text outside the code blocks
    for path in _files(edits) - {e.path for e in edits if e.where is None}:
        assert f"`{path}`" in prose, (heading, path)
