"""The dataset card: Hugging Face front matter and the dataset's real statistics."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
import yaml
from raw_world import standard_world

from gharuntime.builder.build import build
from gharuntime.builder.card import load_template
from gharuntime.dataset import load, read_manifest
from gharuntime.source_kinds.raw import RawSource


@pytest.fixture(scope="module")
def carded_dataset(shared_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("card")
    store = standard_world(shared_dir).write(
        root / "store", source="simulate dump seed=3", synthetic=True
    )
    out = root / "ds"
    build(RawSource([store]), out)
    return out


def front_matter(root: Path) -> dict:
    text = (root / "README.md").read_text()
    return yaml.safe_load(text[4 : text.index("\n---", 4)])


def test_template_ships_as_package_data() -> None:
    assert "$front_matter" in load_template()


def test_front_matter_has_the_hugging_face_fields(carded_dataset: Path) -> None:
    front = front_matter(carded_dataset)
    assert front["task_categories"] == ["tabular-regression"]
    assert front["size_categories"] == ["n<1K"]
    assert {"license", "pretty_name", "tags", "source_datasets"} <= front.keys()
    configs = {c["config_name"]: c for c in front["configs"]}
    assert set(configs) == {"temporal", "cross_repo"}
    splits = {d["split"] for d in configs["temporal"]["data_files"]}
    assert splits == {"train", "validation", "test"}


def test_card_says_plainly_a_simulated_store_is_synthetic(carded_dataset: Path) -> None:
    text = (carded_dataset / "README.md").read_text()
    assert "**This dataset is synthetic.**" in text
    assert "synthetic" in front_matter(carded_dataset)["tags"]


def test_card_reports_rows_per_split_from_the_data(carded_dataset: Path) -> None:
    text = (carded_dataset / "README.md").read_text()
    counts = [load(carded_dataset, "temporal", s).height for s in ("train", "validation", "test")]
    assert f"| temporal | {counts[0]} | {counts[1]} | {counts[2]} |" in text


def test_card_reports_the_runner_os_mix(carded_dataset: Path) -> None:
    text = (carded_dataset / "README.md").read_text()
    # standard_world: per run 7 Linux-labelled jobs (lint, 2 ubuntu tests, 2 builds, call, dyn),
    # 1 Windows, 1 macOS and 1 self-hosted gpu job; 3 runs.
    assert "| Linux | 21 | 70.0% |" in text
    assert "| Windows | 3 | 10.0% |" in text
    assert "| unknown | 3 | 10.0% |" in text


def test_card_reports_duration_quantiles_and_embeds_the_histogram(carded_dataset: Path) -> None:
    text = (carded_dataset / "README.md").read_text()
    rows = pl.concat([load(carded_dataset, "temporal", s) for s in ("train", "validation", "test")])
    assert f"| seconds | {rows['duration_s'].min():,.1f} |" in text
    assert "![Histogram of job durations](figures/duration_hist.png)" in text
    png = (carded_dataset / "figures" / "duration_hist.png").read_bytes()
    assert png.startswith(b"\x89PNG")


def test_card_lists_every_filter_with_its_count(carded_dataset: Path) -> None:
    text = (carded_dataset / "README.md").read_text()
    for name, n in read_manifest(carded_dataset)["filters"].items():
        assert f"| `{name}` | {n:,} |" in text
    assert "Conclusion policy: only jobs with conclusion `success` are kept" in text


def test_card_lists_each_repository_in_each_split(carded_dataset: Path) -> None:
    text = (carded_dataset / "README.md").read_text()
    comp = read_manifest(carded_dataset)["composition"]
    for config in ("temporal", "cross_repo"):
        for split in ("train", "validation", "test"):
            for r in comp[config][split]:
                row = f"| {config} | {split} | `{r['repo']}` | {r['rows']:,} | {r['runs']:,} |"
                assert row in text
    # per repository, the temporal split is in time order
    by_repo: dict[str, dict[str, dict[str, str]]] = {}
    for split in ("train", "validation", "test"):
        for r in comp["temporal"][split]:
            by_repo.setdefault(r["repo"], {})[split] = r
    for splits in by_repo.values():
        if "test" in splits:
            assert splits["train"]["last"] <= splits["test"]["first"]


def test_card_reports_the_time_window(carded_dataset: Path) -> None:
    text = (carded_dataset / "README.md").read_text()
    assert "| time window (job creation, UTC) | 2024-03-01 12:00 to 2024-03-01 14:00 |" in text


def test_card_says_what_each_config_measures(carded_dataset: Path) -> None:
    text = " ".join((carded_dataset / "README.md").read_text().split())
    assert "effectively a lookup of the job's own history" in text
    seen = read_manifest(carded_dataset)["composition"]["temporal"]["test_seen_in_train"]
    assert f"({seen['test_rows_seen']:,} of {seen['test_rows']:,};" in text
    assert (
        "the generalization tables, to jobs and repositories never seen, are the `cross_repo`"
        in text
    )
