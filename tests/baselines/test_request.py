"""baseline's one typed request: the model folder's default and every output rule, in the
library; the command only turns options into a BaselineRequest and reports the first problem."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from gharuntime.baselines.request import BaselineRequest, run_request
from gharuntime.cli.main import cli


def test_the_model_folder_defaults_beside_the_submission() -> None:
    assert BaselineRequest("median", "ds", Path("runs/a.jsonl")).model_dir == Path("runs/a.model")
    assert BaselineRequest("median", "ds", Path("runs/a")).model_dir == Path("runs/a.model")
    given = BaselineRequest("median", "ds", Path("a.jsonl"), model_out=Path("m"))
    assert given.model_dir == Path("m")


def test_every_output_rule_names_its_option(fixture_dataset: Path, tmp_path: Path) -> None:
    ds = str(fixture_dataset)
    ok = BaselineRequest("median", ds, tmp_path / "a.jsonl")
    assert ok.output_problems() == []
    over_manifest = BaselineRequest("median", ds, fixture_dataset / "manifest.json")
    # the command reports the first: the submission over the manifest, then its model folder
    options = [o for o, _ in over_manifest.output_problems()]
    assert options[0] == "--out" and "--model-out" in options
    inside = BaselineRequest("median", ds, tmp_path / "a.jsonl", model_out=fixture_dataset / "m")
    assert [o for o, _ in inside.output_problems()] == ["--model-out"]
    (tmp_path / "file").write_text("x")
    not_folder = BaselineRequest("median", ds, tmp_path / "a.jsonl", model_out=tmp_path / "file")
    assert not_folder.output_problems() == [("--model-out", f"{tmp_path / 'file'} is not a folder")]
    ckpt_in_ds = BaselineRequest(
        "laser", ds, tmp_path / "a.jsonl", params={"checkpoint_dir": str(fixture_dataset / "c")}
    )
    assert [o for o, _ in ckpt_in_ds.output_problems()] == ["--param"]
    ckpt_in_model = BaselineRequest(
        "laser", ds, tmp_path / "a.jsonl", params={"checkpoint_dir": str(tmp_path / "a.model/c")}
    )
    (problem,) = ckpt_in_model.output_problems()
    assert problem[0] == "--param" and "replaced when the model is written" in problem[1]


def test_a_name_too_long_for_the_file_system_is_a_problem_not_a_crash(
    fixture_dataset: Path, tmp_path: Path
) -> None:
    """A 250-character --out is a valid file name, but its model folder (`.model` added) and
    its metadata file are not: each is named as a problem (the fuzz sweep once found
    `exists()` raising there)."""
    ds = str(fixture_dataset)
    long_model = BaselineRequest(
        "median", ds, tmp_path / "a.jsonl", model_out=tmp_path / ("m" * 300)
    )
    ((option, why),) = long_model.output_problems()
    assert option == "--model-out" and "File name too long" in why and "shorter" in why
    out = CliRunner().invoke(
        cli, ["baseline", "median", "--dataset", ds, "--out", str(tmp_path / ("x" * 250))]
    )
    assert out.exit_code == 2, out.output
    assert "File name too long" in out.output and not isinstance(out.exception, OSError)


def test_the_command_reports_the_request_problem_and_writes_nothing(
    fixture_dataset: Path, tmp_path: Path
) -> None:
    out = CliRunner().invoke(
        cli,
        ["baseline", "median", "--dataset", str(fixture_dataset), "--out",
         str(tmp_path / "a.jsonl"), "--model-out", str(fixture_dataset / "m")],
    )  # fmt: skip
    assert out.exit_code == 2 and "--model-out" in out.output and "overlaps" in out.output
    assert not (tmp_path / "a.jsonl").exists() and not (fixture_dataset / "m").exists()


def test_run_request_writes_the_submission_set(fixture_dataset: Path, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    request = BaselineRequest("median", str(fixture_dataset), runs / "m.jsonl")
    run = run_request(request)
    assert run.written and run.model_dir == runs / "m.model"
    names = sorted(p.name for p in runs.iterdir())
    assert names == ["m.jsonl", "m.meta.json", "m.model", "m.quantiles.jsonl"]
    assert json.loads((runs / "m.meta.json").read_text())["method"] == "median"
