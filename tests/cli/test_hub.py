"""`gharuntime publish` and `download` end to end against the project's Hub endpoint: the
printed commit and URL, the token kept out of every output, error and file, and the published
card read by the `datasets` library."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from hub_servers import hub_env

from gharuntime.cli.main import cli
from gharuntime.dataset import read_manifest
from gharuntime.sim.hub import HubServer, serve_hub

TOKEN = "hf_cli_secret_token_31337"


@pytest.fixture()
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubServer]:
    for key in [k for k in os.environ if k.startswith(("HF_", "HUGGINGFACE_"))]:
        if key != "HF_HUB_DISABLE_XET":
            monkeypatch.delenv(key)
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    with serve_hub(tmp_path / "hub-store", tokens={TOKEN: "alice"}) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.url)
        yield server


def _invoke(*args: str, token: str | None = TOKEN) -> tuple[int, str, str]:
    env = {"HF_TOKEN": token} if token else {}
    result = CliRunner().invoke(cli, list(args), env=env)
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def test_publish_prints_the_commit_and_url_and_download_gets_it_back(
    hub: HubServer, fixture_dataset: Path, tmp_path: Path
) -> None:
    code, out, err = _invoke(
        "publish", str(fixture_dataset), "--repo-id", "org/bench", "--tag", "v1.0"
    )
    assert code == 0, err
    lines = dict(ln.split(None, 1) for ln in out.splitlines())
    assert lines["url"] == f"{hub.url}/datasets/org/bench/tree/v1.0"
    assert len(lines["commit"]) == 40 and lines["tag"] == "v1.0"
    code, out, err = _invoke("download", "org/bench@v1.0", "--to", str(tmp_path / "copy"))
    assert code == 0, err
    assert dict(ln.split(None, 1) for ln in out.splitlines())["commit"] == lines["commit"]
    assert read_manifest(tmp_path / "copy") == read_manifest(fixture_dataset)
    # again, unchanged: nothing new is sent, the same commit is printed
    code, out2, err = _invoke(
        "publish", str(fixture_dataset), "--repo-id", "org/bench", "--tag", "v1.0"
    )
    assert code == 0 and "nothing changed" in err
    assert dict(ln.split(None, 1) for ln in out2.splitlines())["commit"] == lines["commit"]


def test_publish_refuses_an_invalid_folder_with_exit_2(
    hub: HubServer, fixture_dataset: Path
) -> None:
    (fixture_dataset / "manifest.json").write_text("{}", encoding="utf-8")
    code, _, err = _invoke("publish", str(fixture_dataset), "--repo-id", "org/bench")
    assert code == 2 and "not a valid dataset folder" in err and "Traceback" not in err
    assert hub.traffic.requests == []


def test_the_token_never_appears_in_output_errors_or_files(
    hub: HubServer, fixture_dataset: Path, tmp_path: Path
) -> None:
    seen = []
    for args, token in [
        (["publish", str(fixture_dataset), "--repo-id", "org/bench", "--tag", "v1"], TOKEN),
        (["publish", str(fixture_dataset), "--repo-id", "org/private", "--private"], TOKEN),
        (["download", "org/bench@v1", "--to", str(tmp_path / "copy")], TOKEN),
        (["download", "org/private", "--to", str(tmp_path / "p")], TOKEN),
        # refused: a token the Hub does not know, and an unknown repository
        (["publish", str(fixture_dataset), "--repo-id", "org/x"], TOKEN + "-revoked"),
        (["download", "org/nothing@v1", "--to", str(tmp_path / "n")], TOKEN),
    ]:
        code, out, err = _invoke(*args, token=token)
        seen.append((code, out + err))
    assert [c for c, _ in seen] == [0, 0, 0, 0, 2, 2]
    for _, text in seen:
        assert TOKEN not in text
    leaked = [p for p in tmp_path.rglob("*") if p.is_file() and TOKEN.encode() in p.read_bytes()]
    assert leaked == []


@pytest.mark.slow
def test_the_published_card_loads_with_the_datasets_library(
    hub: HubServer, fixture_dataset: Path, tmp_path: Path
) -> None:
    code, _, err = _invoke(
        "publish", str(fixture_dataset), "--repo-id", "org/bench", "--tag", "v1.0"
    )
    assert code == 0, err
    # datasets reads HF_ENDPOINT when it is imported: a fresh interpreter, pointed at the Hub
    script = (
        "import datasets, json\n"
        "d = datasets.load_dataset('org/bench', 'temporal', revision='v1.0')\n"
        "print(json.dumps({s: [d[s].num_rows, sorted(d[s]['id'])] for s in d}))\n"
    )
    env = hub_env(tmp_path / "ds-home", hub.url, HF_DATASETS_CACHE=str(tmp_path / "ds-cache"))
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    import gharuntime

    for split in ("train", "validation", "test"):
        want = gharuntime.load(fixture_dataset, config="temporal", split=split)
        assert got[split] == [want.height, sorted(want["id"].to_list())]


def test_publish_uses_the_huggingface_hub_login_when_hf_token_is_unset(
    hub: HubServer, fixture_dataset: Path, tmp_path: Path
) -> None:
    home = tmp_path / "logged-in"
    home.mkdir()
    (home / "token").write_text(TOKEN, encoding="utf-8")  # where `hf auth login` stores it
    env = hub_env(home, hub.url)
    cmd = [sys.executable, "-c", "from gharuntime.cli.main import main; main()", "publish"]
    done = subprocess.run(
        [*cmd, str(fixture_dataset), "--repo-id", "org/login", "--private"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert TOKEN not in done.stdout + done.stderr
    assert hub.store.repo("org/login") is not None


def test_a_bad_tag_name_is_refused_before_anything_is_sent(
    hub: HubServer, fixture_dataset: Path
) -> None:
    code, _, err = _invoke(
        "publish", str(fixture_dataset), "--repo-id", "org/bench", "--tag", "../v1"
    )
    assert code == 2 and "--tag" in err
    assert hub.traffic.requests == []
