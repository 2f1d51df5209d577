"""benchmarks/laser_cpu_train.py, benchmarks/laser_fit_split.py and benchmarks/laser_speed.py,
each run end to end on the fixture jobs: the sides and the fit are real trainings, and what they print is what they
measured (tokens a second of the trainings they ran, not fixed numbers)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from script_support import load_script, write_yaml_dataset

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("accelerate")


@pytest.fixture(scope="module")
def yaml_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_yaml_dataset(tmp_path_factory.mktemp("speed") / "dataset")


def _last_json(out: str) -> dict[str, object]:
    return dict(json.loads(out.strip().splitlines()[-1]))


def test_cpu_train_runs_one_and_two_process_sides_on_real_trainings(
    yaml_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = load_script("laser_cpu_train")
    args = ["run", "--dataset", str(yaml_dataset), "--work", str(tmp_path / "work")]
    args += ["--sizes", "tiny", "--rows", "24", "--rounds", "1", "--steps", "2", "--warmup", "1"]
    assert script.main([*args, "--only", "fp32 1x2 left,fp32 1x2,bf16 2x1"]) == 0
    result = _last_json(capsys.readouterr().out)
    tiny = result["sizes"]["tiny"]  # type: ignore[index]
    speeds = tiny["tokens_per_s"]
    assert set(speeds) == {"fp32 1x2 left", "fp32 1x2", "bf16 2x1"}
    assert all(v > 0 for v in speeds.values())
    # the reference is the left-padded training, and the ratios are the speeds measured
    ratios = tiny["vs_fp32_1x2_left"]
    assert ratios["bf16 2x1"] == round(speeds["bf16 2x1"] / speeds["fp32 1x2 left"], 3)
    # the two layouts train the same model: the same last loss to float rounding
    loss = tiny["last_loss"]
    assert loss["fp32 1x2 left"][0] == pytest.approx(loss["fp32 1x2"][0], rel=1e-3)
    assert result["examples"]["jobs"] == 24  # type: ignore[index]


def test_cpu_train_refuses_a_missing_dataset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = load_script("laser_cpu_train")
    assert script.main(["run", "--dataset", str(tmp_path / "nowhere")]) == 2
    assert "no dataset folder" in capsys.readouterr().err


def test_fit_split_times_a_whole_fit_against_the_bare_loop(
    yaml_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = load_script("laser_fit_split")
    out = tmp_path / "fit.json"
    args = ["--dataset", str(yaml_dataset), "--work", str(tmp_path / "work"), "--json", str(out)]
    args += ["--epochs", "0.5", "--validations", "2", "--bare-steps", "2", "--bare-rounds", "1"]
    assert script.main(args) == 0
    result = _last_json(capsys.readouterr().out)
    assert json.loads(out.read_text(encoding="utf-8")) == result
    assert result["steps"] >= 1 and result["fit_tokens"] > 0  # type: ignore[operator]
    assert result["validation_by_step"]  # validation ran inside the timed fit
    fit, bare = result["fit_tokens_per_s"], result["bare_tokens_per_s"]
    assert result["ratio_fit_vs_bare"] == round(fit / bare, 3)  # type: ignore[operator]
    # a second run into the same work folder would resume, and its time is not a whole run's
    assert script.main(args) == 2
    assert "resumed" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--sizes", "huge"], "unknown 'huge'"),
        (["--only", "fp16 9x9"], "unknown 'fp16 9x9'"),
    ],
)
def test_cpu_train_refuses_unknown_sizes_and_sides_before_any_work(
    yaml_dataset: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    says: str,
) -> None:
    work = tmp_path / "work"
    run = ["run", "--dataset", str(yaml_dataset), "--work", str(work), *args]
    assert load_script("laser_cpu_train").main(run) == 2
    assert says in capsys.readouterr().err
    assert not work.exists()  # refused before anything was prepared


@pytest.mark.parametrize("args", [["--validations", "0"], ["--epochs", "-1"], ["--rounds", "0"]])
def test_the_scripts_refuse_bad_counts_with_a_usage_error(
    yaml_dataset: Path, args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    name = "laser_cpu_train" if args[0] == "--rounds" else "laser_fit_split"
    full = (["run"] if name == "laser_cpu_train" else []) + ["--dataset", str(yaml_dataset), *args]
    with pytest.raises(SystemExit) as exit_:
        load_script(name).main(full)
    assert exit_.value.code == 2
    assert "must be" in capsys.readouterr().err


def test_fit_split_names_a_dataset_without_the_split_it_needs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "not-a-dataset"
    empty.mkdir()
    args = ["--dataset", str(empty), "--work", str(tmp_path / "work")]
    assert load_script("laser_fit_split").main(args) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and str(empty) in err


@pytest.mark.slow
def test_speed_writes_its_figures_with_the_commit_and_no_machine_path(
    yaml_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The prediction speed-up the docs quote comes from a file: --out writes the JSON printed,
    naming the dataset by name and revision (never its path) and the commit it ran at."""
    out = tmp_path / "speed.json"
    args = ["--dataset", str(yaml_dataset), "--out", str(out), "--fit-steps", "2"]
    args += ["--train-steps", "1", "--jobs", "2", "--samples", "2", "--rounds", "1"]
    args += ["--train-fraction", "1.0", "--batch", "4"]
    assert load_script("laser_speed").main(args) == 0
    result = _last_json(capsys.readouterr().out)
    assert json.loads(out.read_text(encoding="utf-8")) == result
    manifest = json.loads((yaml_dataset / "manifest.json").read_text(encoding="utf-8"))
    assert result["dataset"] == {"name": "dataset", "revision": manifest["revision"]}
    assert str(tmp_path) not in out.read_text(encoding="utf-8")
    assert {"git_commit", "git_dirty", "load_average_before", "load_average_after"} <= set(result)
    ratio = result["ratios"]["predict_reference_vs_shared_ms"]  # type: ignore[index]
    assert ratio["wall"] > 0 and ratio["cpu"] > 0
    assert result["predict"]["same_predictions"] is True  # type: ignore[index]


def test_speed_refuses_a_missing_dataset(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert load_script("laser_speed").main(["--dataset", str(tmp_path / "nowhere")]) == 2
    assert "no dataset folder" in capsys.readouterr().err
