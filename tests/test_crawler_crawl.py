from __future__ import annotations

from datetime import datetime, timezone

from gharuntime.crawler.crawl import default_window, in_shard, parse_time, split_window


def test_split_window_halves_share_only_their_middle_second() -> None:
    halves = split_window("2025-01-01T00:00:00Z", "2025-01-01T00:00:09Z")
    assert halves == (
        ("2025-01-01T00:00:00Z", "2025-01-01T00:00:04Z"),
        ("2025-01-01T00:00:04Z", "2025-01-01T00:00:09Z"),
    )


def test_short_window_does_not_split() -> None:
    assert split_window("2025-01-01T00:00:00Z", "2025-01-01T00:00:01Z") is None


def test_default_window_is_90_days_to_now() -> None:
    now = datetime(2025, 4, 1, 12, 0, 0, 500, tzinfo=timezone.utc)
    assert default_window(90, now) == ("2025-01-01T12:00:00Z", "2025-04-01T12:00:00Z")


def test_parse_time_reads_dates_and_offsets_as_utc() -> None:
    assert parse_time("2025-01-02") == datetime(2025, 1, 2, tzinfo=timezone.utc)
    assert parse_time("2025-01-02T01:00:00-08:00") == datetime(2025, 1, 2, 9, tzinfo=timezone.utc)


def test_shards_partition_repositories_and_ignore_case() -> None:
    names = [f"owner{i}/repo{i}" for i in range(200)]
    parts = [[n for n in names if in_shard(n, (k, 4))] for k in range(1, 5)]
    assert sorted(n for p in parts for n in p) == sorted(names)
    assert all(20 < len(p) < 80 for p in parts)
    assert in_shard("Owner7/Repo7", (1, 4)) == in_shard("owner7/repo7", (1, 4))
