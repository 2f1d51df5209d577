"""Sources that crawl first, over real HTTP on 127.0.0.1: the simulated GitHub, and `--source
github` pointed at a simulated GitHub that a test serves."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from click.testing import CliRunner
from crawler_support import SINCE, TOKENS, UNTIL, repo_names

from gharuntime.cli.main import cli
from gharuntime.dataset import read_manifest
from gharuntime.sim import SimServer, World
from gharuntime.validation import validate_folder


def data_digest(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def simulated_builds(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """The same seeded world built twice, each crawl into its own raw store."""
    root = tmp_path_factory.mktemp("simulated")
    outputs = []
    for name in ("a", "b"):
        result = CliRunner().invoke(
            cli,
            [
                *("build", "--source", "simulated", "--seed", "2", "--scale", "tiny"),
                *("--out", str(root / name), "--crawl-dir", str(root / f"{name}.raw")),
            ],
        )
        assert result.exit_code == 0, result.output
        outputs.append(result.output)
    return root / "a", root / "b", outputs[0]


def test_simulated_source_crawls_and_builds_a_valid_dataset(
    simulated_builds: tuple[Path, Path, str],
) -> None:
    ds, _, output = simulated_builds
    assert validate_folder(ds) == []
    manifest = read_manifest(ds)
    assert manifest["source"]["kind"] == "simulated"
    assert manifest["source"]["seed"] == 2
    assert manifest["rows"] > 100
    assert "input problems: none" in output


def test_simulated_dataset_says_it_is_synthetic(simulated_builds: tuple[Path, Path, str]) -> None:
    card = (simulated_builds[0] / "README.md").read_text()
    assert "**This dataset is synthetic.**" in card
    assert "seed 2, scale tiny" in card


def test_same_seed_gives_byte_identical_datasets(simulated_builds: tuple[Path, Path, str]) -> None:
    assert data_digest(simulated_builds[0]) == data_digest(simulated_builds[1])


def test_github_source_crawls_the_api_url_then_builds(
    crawl_server: SimServer, crawl_world: World, token_file: Path, tmp_path: Path
) -> None:
    repos = tmp_path / "repos.txt"
    repos.write_text("\n".join(repo_names(crawl_world, public_only=True)) + "\n")
    result = CliRunner().invoke(
        cli,
        [
            *("build", "--source", "github", "--repos", str(repos)),
            *("--token-file", str(token_file), "--api-url", crawl_server.url),
            *("--since", SINCE, "--until", UNTIL, "--out", str(tmp_path / "ds")),
        ],
    )
    assert result.exit_code == 0, result.output
    assert validate_folder(tmp_path / "ds") == []
    assert read_manifest(tmp_path / "ds")["source"]["kind"] == "github"
    # The simulated GitHub said what it is; the store recorded it; the dataset says it.
    assert read_manifest(tmp_path / "ds")["source"]["synthetic"] is True
    assert "**This dataset is synthetic.**" in (tmp_path / "ds" / "README.md").read_text()
    assert (tmp_path / "ds.raw" / "state.sqlite").is_file()  # the crawl is kept, resumable
    for secret in TOKENS:
        assert secret not in result.output
        assert secret not in (tmp_path / "ds" / "manifest.json").read_text()


def test_github_source_needs_repos_or_search(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["build", "--source", "github", "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert "--repos FILE or --search QUERY" in result.output


def test_unreachable_api_is_a_clear_error_not_a_traceback(tmp_path: Path) -> None:
    repos = tmp_path / "repos.txt"
    repos.write_text("octo/one\n")
    result = CliRunner().invoke(
        cli,
        [
            *("build", "--source", "github", "--repos", str(repos)),
            *(
                "--api-url",
                "http://127.0.0.1:9",
                "--max-retries",
                "0",
                "--out",
                str(tmp_path / "o"),
            ),
        ],
        env={"GITHUB_TOKEN": ""},
    )
    assert result.exit_code == 2, result.output
    assert "build failed" in result.output
    assert "Traceback" not in result.output
