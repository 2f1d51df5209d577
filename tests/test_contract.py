from gharuntime import contract
from gharuntime.contract import COLUMNS, TRACKS, Role, cross_repo_bucket, input_columns


def test_every_column_has_a_role_and_a_meaning() -> None:
    for c in COLUMNS:
        assert isinstance(c.role, Role)
        assert len(c.meaning) > 10, c.name


def test_outcome_fields_are_never_inputs() -> None:
    leaks = {
        "started_at",
        "completed_at",
        "conclusion",
        "duration_s",
        "queue_s",
        "log_bytes",
        "runner_image",
    }
    for track in TRACKS:
        assert leaks.isdisjoint(input_columns(track)), track


def test_history_is_an_input_only_on_the_history_track() -> None:
    assert "history_duration_s" in input_columns("history")
    assert "history_duration_s" not in input_columns("config")
    assert "history_duration_s" not in input_columns("multi")


def test_targets_are_the_three_the_contract_names() -> None:
    assert contract.TARGETS == ("duration_s", "queue_s", "log_bytes")
    assert contract.PRIMARY_TARGET == "duration_s"


def test_cross_repo_bucket_is_stable_and_roughly_80_10_10() -> None:
    # Pinned values: a change here silently reshuffles every published cross_repo split.
    # Computed independently: sha256("gharuntime:cross_repo:<id>")[:8] / 2**64 against 0.8 and 0.9.
    import hashlib

    for i in range(1, 200):
        x = (
            int.from_bytes(
                hashlib.sha256(f"gharuntime:cross_repo:{i}".encode()).digest()[:8], "big"
            )
            / 2**64
        )
        assert cross_repo_bucket(i) == ("train" if x < 0.8 else "validation" if x < 0.9 else "test")
    assert [cross_repo_bucket(i) for i in (1, 2, 3, 12)] == ["train", "test", "train", "test"]
    counts = {"train": 0, "validation": 0, "test": 0}
    for i in range(20_000):
        counts[cross_repo_bucket(i)] += 1
    assert 0.78 < counts["train"] / 20_000 < 0.82
    assert 0.08 < counts["validation"] / 20_000 < 0.12
    assert 0.08 < counts["test"] / 20_000 < 0.12


def test_split_file_names_follow_hugging_face_convention() -> None:
    assert contract.split_file_name("train", 0, 3) == "train-00000-of-00003.parquet"
