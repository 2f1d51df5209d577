"""Which launched process this is, from the launcher's environment (no torch needed)."""

from __future__ import annotations

import pytest

from gharuntime.baselines.launch import is_primary, launched
from gharuntime.baselines.method import MethodError

ENV = ("LOCAL_RANK", "RANK", "WORLD_SIZE")


@pytest.fixture(autouse=True)
def _clean(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV:
        monkeypatch.delenv(name, raising=False)


def test_without_a_launcher_there_is_one_primary_process() -> None:
    assert launched() == (0, 1) and is_primary()


def test_a_rank_alone_is_not_a_launch(monkeypatch: pytest.MonkeyPatch) -> None:
    # schedulers set RANK for their own reasons; torchrun and accelerate also set LOCAL_RANK
    monkeypatch.setenv("RANK", "3")
    monkeypatch.setenv("WORLD_SIZE", "4")
    assert launched() == (0, 1) and is_primary()


@pytest.mark.parametrize(("rank", "primary"), [("0", True), ("1", False), ("3", False)])
def test_a_launched_process_knows_its_rank(
    monkeypatch: pytest.MonkeyPatch, rank: str, primary: bool
) -> None:
    monkeypatch.setenv("LOCAL_RANK", rank)
    monkeypatch.setenv("RANK", rank)
    monkeypatch.setenv("WORLD_SIZE", "4")
    assert launched() == (int(rank), 4)
    assert is_primary() is primary


@pytest.mark.parametrize(
    ("rank", "size", "says"),
    [("x", "2", "RANK='x'"), ("0", "", "WORLD_SIZE=''"), ("2", "2", "does not fit"),
     ("0", "0", "does not fit"), ("-1", "2", "does not fit")],
)  # fmt: skip
def test_a_malformed_environment_is_a_method_error(
    monkeypatch: pytest.MonkeyPatch, rank: str, size: str, says: str
) -> None:
    monkeypatch.setenv("LOCAL_RANK", "0")
    monkeypatch.setenv("RANK", rank)
    monkeypatch.setenv("WORLD_SIZE", size)
    with pytest.raises(MethodError, match=says.replace("(", r"\(")):
        launched()
