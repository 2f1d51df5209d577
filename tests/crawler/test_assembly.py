"""crawler/assembly.py: tokens, repositories, window and client, as both crawling commands read
them; every refusal is a library error naming the option, and the commands show it as such."""

from __future__ import annotations

import dataclasses
import os
import subprocess
from pathlib import Path

import pytest
from crawler_support import gharuntime_exe

from gharuntime.crawler.assembly import (
    CrawlRequest,
    CrawlSetupError,
    check_out_folder,
    crawl_window,
    load_tokens,
    make_client,
    plan_crawl,
    read_repos,
)
from gharuntime.errors import GharuntimeError

SECRET = "ghp_" + "qzassembly" + "Y" * 26


def test_tokens_are_read_one_a_line_and_labelled_by_line(tmp_path: Path) -> None:
    path = tmp_path / "tokens.txt"
    path.write_text(f"# team tokens\n\n{SECRET}\n  {SECRET[::-1]}  \n")
    tokens = load_tokens(path)
    assert [t.secret for t in tokens] == [SECRET, SECRET[::-1]]
    assert [t.label for t in tokens] == [
        "token 1 (--token-file line 3)",
        "token 2 (--token-file line 4)",
    ]


def test_a_token_file_without_tokens_is_refused_naming_the_option(tmp_path: Path) -> None:
    path = tmp_path / "tokens.txt"
    path.write_text("# nothing yet\n\n")
    with pytest.raises(CrawlSetupError) as info:
        load_tokens(path)
    assert info.value.option == "--token-file"
    assert str(info.value) == f"--token-file: {path} holds no token"
    assert isinstance(info.value, GharuntimeError)


def test_a_token_a_header_cannot_carry_is_named_by_line_never_shown(tmp_path: Path) -> None:
    path = tmp_path / "tokens.txt"
    path.write_text(f"{SECRET}\n{SECRET} {SECRET}\n")
    with pytest.raises(CrawlSetupError) as info:
        load_tokens(path)
    assert "line 2" in str(info.value) and "holds a space" in str(info.value)
    assert "qzassembly" not in str(info.value)


def test_an_unreadable_token_file_is_refused_naming_the_option(tmp_path: Path) -> None:
    with pytest.raises(CrawlSetupError) as info:
        load_tokens(tmp_path)  # a folder
    assert info.value.option == "--token-file" and "not a regular file" in str(info.value)


def test_github_token_is_used_without_a_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", f" {SECRET}\n")
    assert [(t.secret, t.label) for t in load_tokens(None)] == [(SECRET, "GITHUB_TOKEN")]
    monkeypatch.setenv("GITHUB_TOKEN", "two tokens")
    with pytest.raises(CrawlSetupError, match=r"^GITHUB_TOKEN: the token holds a space"):
        load_tokens(None)
    monkeypatch.delenv("GITHUB_TOKEN")
    assert load_tokens(None) == []


def test_repos_skip_comments_and_refuse_a_line_that_is_not_owner_name(tmp_path: Path) -> None:
    path = tmp_path / "repos.txt"
    path.write_text("# mine\nocto/one  # the first\n\nocto/two\n")
    assert read_repos(path) == ["octo/one", "octo/two"]
    for bad in ("not-a-repo", "a/b/c", "/b", "a/", "a b/c", "a/\x07b", "a/" + "b" * 200):
        path.write_text(f"octo/one\n{bad}\n")
        with pytest.raises(CrawlSetupError) as info:
            read_repos(path)
        assert info.value.option == "--repos", bad
        assert f"{path}:2:" in str(info.value) and "is not owner/name" in str(info.value)


def test_window_is_normalised_and_an_inverted_one_refused() -> None:
    assert crawl_window("2026-01-02", "2026-03-04T05:06:07Z") == (
        "2026-01-02T00:00:00Z",
        "2026-03-04T05:06:07Z",
    )
    assert crawl_window(None, None) == (None, None)
    with pytest.raises(CrawlSetupError) as info:
        crawl_window("2026-03-01", "2026-02-01")
    assert info.value.option == "--since" and "is after --until 2026-02-01" in str(info.value)
    with pytest.raises(CrawlSetupError) as info:
        crawl_window(None, "last week")
    assert info.value.option == "--until" and "is not a date" in str(info.value)


def test_make_client_carries_the_policy_and_refuses_a_backoff_above_its_cap() -> None:
    client = make_client(
        "http://127.0.0.1:9",
        [],
        max_retries=3,
        backoff_base=0.5,
        backoff_cap=9.0,
        secondary_wait=7.0,
    )
    assert client.api_url == "http://127.0.0.1:9"
    assert (client.policy.max_retries, client.policy.backoff_base) == (3, 0.5)
    assert (client.policy.backoff_cap, client.policy.secondary_wait) == (9.0, 7.0)
    assert client.etags is not None
    with pytest.raises(CrawlSetupError) as info:
        make_client("http://127.0.0.1:9", [], max_retries=1, backoff_base=5, backoff_cap=1)
    assert info.value.option == "--backoff"


@pytest.mark.parametrize("command", [["crawl", "--out", "raw"], ["build", "--source", "github"]])
def test_both_commands_show_the_refusal_and_exit_2(command: list[str], tmp_path: Path) -> None:
    tokens = tmp_path / "tokens.txt"
    tokens.write_text("# none\n")
    repos = tmp_path / "repos.txt"
    repos.write_text("octo/one\n")
    env = {**os.environ, "GITHUB_API_URL": "http://127.0.0.1:9"}
    proc = subprocess.run(
        [
            gharuntime_exe(),
            *command,
            *("--repos", str(repos), "--token-file", str(tokens)),
            *("--api-url", "http://127.0.0.1:9"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 2, proc.stderr
    assert "--token-file" in proc.stderr and "holds no token" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_plan_crawl_checks_everything_then_assembles_options_and_client(tmp_path: Path) -> None:
    repos = tmp_path / "repos.txt"
    repos.write_text("octo/one\n")
    tokens = tmp_path / "tokens.txt"
    tokens.write_text(f"{SECRET}\n")
    plan = plan_crawl(
        CrawlRequest(
            out=tmp_path / "raw",
            repos_file=repos,
            since="2026-01-01",
            shard="2/3",
            log_cap_mb=1.5,
            token_file=tokens,
            api_url="http://127.0.0.1:9",
            backoff=(0.25, 4.0),
        )
    )
    assert (plan.out, plan.tokens) == (tmp_path / "raw", 1)
    assert plan.options.repos == ["octo/one"] and plan.options.shard == (2, 3)
    assert plan.options.since == "2026-01-01T00:00:00Z"
    assert plan.options.log_cap_bytes == 1_500_000
    assert (plan.client.policy.backoff_base, plan.client.policy.backoff_cap) == (0.25, 4.0)
    assert SECRET not in repr(plan)


@pytest.mark.parametrize(
    ("change", "option", "message"),
    [
        ({"search": "x"}, "--repos", "exactly one of --repos FILE or --search QUERY"),
        ({"shard": "5/4"}, "--shard", "K must be between 1 and N"),
        ({"shard": "half"}, "--shard", "is not K/N"),
        ({"backoff": (9.0, 1.0)}, "--backoff", "above the cap"),
        ({"until": "yesterday"}, "--until", "is not a date"),
    ],
)
def test_plan_crawl_refuses_naming_the_option(
    change: dict[str, object], option: str, message: str, tmp_path: Path
) -> None:
    repos = tmp_path / "repos.txt"
    repos.write_text("octo/one\n")
    request = dataclasses.replace(CrawlRequest(out=tmp_path / "raw", repos_file=repos), **change)
    with pytest.raises(CrawlSetupError) as info:
        plan_crawl(request)
    assert info.value.option == option and message in str(info.value)


def test_an_out_folder_that_is_not_a_crawl_store_is_refused_untouched(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("someone's data\n")
    with pytest.raises(CrawlSetupError, match="holds no raw store") as info:
        check_out_folder(tmp_path)
    assert info.value.option == "--out"
    with pytest.raises(CrawlSetupError, match="is a file"):
        check_out_folder(tmp_path / "notes.txt")
    check_out_folder(tmp_path / "new")  # a new folder is fine
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]
