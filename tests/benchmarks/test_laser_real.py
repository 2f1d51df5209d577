"""benchmarks/laser_real.py: --epochs turns passes over the train split into a step count."""

from __future__ import annotations

import math
from pathlib import Path
from types import ModuleType

import pytest
from script_support import load_script

from gharuntime.dataset import load


def _script() -> ModuleType:
    return load_script("laser_real")


@pytest.mark.parametrize("config", ["temporal", "cross_repo"])
@pytest.mark.parametrize("epochs", [0.25, 1.0, 4.0])
def test_epochs_become_steps_over_the_train_split(
    fixture_dataset_master: Path, config: str, epochs: float
) -> None:
    rows = load(fixture_dataset_master, config, "train").height
    assert rows > 8
    steps = _script().steps_for_epochs(fixture_dataset_master, config, epochs, 8)
    assert steps == max(1, math.ceil(epochs * rows / 8))


@pytest.mark.parametrize("value", ["0", "-1"])
def test_epochs_must_be_positive(
    fixture_dataset_master: Path, tmp_path: Path, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["--dataset", str(fixture_dataset_master), "--work", str(tmp_path), "--epochs", value]
    with pytest.raises(SystemExit) as exc:
        _script().main(args)
    assert exc.value.code == 2
    assert "--epochs must be above 0" in capsys.readouterr().err
