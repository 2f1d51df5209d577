"""`gharuntime crawl` as a user runs it: exit codes, messages, and no token anywhere."""

from __future__ import annotations

import gzip
import subprocess
from pathlib import Path

import pytest
from crawler_support import TOKENS, cli_crawl, gharuntime_exe, repo_names

from gharuntime.sim import SimServer, World


def _repos_file(tmp_path: Path, names: list[str]) -> Path:
    path = tmp_path / "repos.txt"
    path.write_text("# to crawl\n" + "\n".join(names) + "\n")
    return path


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [gharuntime_exe(), "crawl", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


def _everything_written(root: Path) -> bytes:
    """Every byte under a folder, with shards decompressed."""
    blobs = []
    for path in sorted(root.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            blobs.append(gzip.decompress(data) if path.name.endswith(".gz") else data)
    return b"\n".join(blobs)


@pytest.mark.slow
def test_no_token_appears_in_output_errors_or_stored_files(
    crawl_world: World, crawl_server: SimServer, token_file: Path, tmp_path: Path
) -> None:
    names = ["nobody/missing-repo", *repo_names(crawl_world)[:6]]
    out = tmp_path / "raw"
    proc = cli_crawl(
        out,
        crawl_server.url,
        _repos_file(tmp_path, names),
        token_file,
        "--logs",
        "--json",
        cwd=tmp_path,
    )
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 1  # the missing repository is a reported problem
    assert "nobody/missing-repo" in stderr and '"problems"' in stdout
    written = _everything_written(out)
    assert b'"kind":"log"' in written and b'"kind":"job"' in written
    for token in TOKENS:
        for text in (stdout, stderr):
            assert token not in text and token[4:16] not in text
        assert token.encode() not in written and token[4:16].encode() not in written


def test_bad_token_is_named_by_position_and_exits_2(
    crawl_server: SimServer, tmp_path: Path
) -> None:
    secret = "ghp_" + "qzwrongtok" + "X" * 26
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(f"# ours\n{secret}\n")
    repos = _repos_file(tmp_path, ["a/b"])
    proc = _run(
        "--out",
        str(tmp_path / "raw"),
        "--repos",
        str(repos),
        "--token-file",
        str(tokens),
        "--api-url",
        crawl_server.url,
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert "token 1 (--token-file line 2)" in proc.stderr and "401" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert secret not in proc.stderr + proc.stdout and "qzwrongtok" not in proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "exactly one of --repos FILE or --search QUERY"),
        (("--search", "x", "--shard", "5/4"), "K must be between 1 and N"),
        (("--search", "x", "--since", "last week"), "is not a date"),
    ],
)
def test_usage_errors_exit_2_with_a_hint(
    args: tuple[str, ...], message: str, tmp_path: Path
) -> None:
    proc = _run("--out", str(tmp_path / "raw"), *args, cwd=tmp_path)
    assert proc.returncode == 2 and message in proc.stderr


def test_a_malformed_repos_line_names_file_and_line(tmp_path: Path) -> None:
    repos = tmp_path / "repos.txt"
    repos.write_text("octo/one\nnot-a-repo\n")
    proc = _run("--out", str(tmp_path / "raw"), "--repos", str(repos), cwd=tmp_path)
    assert proc.returncode == 2 and "repos.txt:2" in proc.stderr


def test_help_teaches_with_an_example() -> None:
    proc = subprocess.run([gharuntime_exe(), "crawl", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0
    assert "Example" in proc.stdout and "--max-runs-per-workflow" in proc.stdout


def test_a_folder_that_is_not_a_crawl_store_is_refused(tmp_path: Path) -> None:
    out = tmp_path / "dataset"
    out.mkdir()
    (out / "README.md").write_text("someone's data\n")
    proc = _run("--out", str(out), "--search", "x", cwd=tmp_path)
    assert proc.returncode == 2 and "holds no raw store" in proc.stderr
    assert sorted(p.name for p in out.iterdir()) == ["README.md"]
