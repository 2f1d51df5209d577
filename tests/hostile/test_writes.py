"""Issue 37 class 2, writes that destroy inputs or half-publish: an output is never any file or
folder the command reads (eval: every file its readers open, found here by watching the opens
of a real run; build: the --previous release and every source), and `publish --tag` refuses a
tag naming another commit before main moves."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fuzz_support import ENV, check, invoke, tree_digest
from hostile_support import build_world, sandbox
from huggingface_hub import HfApi

from gharuntime.sim.hub import HubServer, serve_hub


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, fixture_dataset_master: Path) -> dict[str, Any]:
    return build_world(tmp_path_factory.mktemp("writes"), fixture_dataset_master)


# Run the CLI with an audit hook that records every file opened (builtins.open and os.open
# alike): the set of files a run reads, whatever rules name them.
_WATCH = """
import json, os, sys
opened = []
def hook(event, args):
    if event == "open" and args and isinstance(args[0], (str, bytes, os.PathLike)):
        opened.append(os.path.abspath(os.fsdecode(args[0])))
sys.addaudithook(hook)
from gharuntime.cli.main import cli
try:
    cli(sys.argv[2:], prog_name="gharuntime")
except SystemExit:
    pass
with open(sys.argv[1], "w") as f:
    json.dump(opened, f)
"""


def _files_read(args: list[str], cwd: Path) -> set[Path]:
    log = cwd.parent / f"{cwd.name}-opened.json"
    env = {**os.environ, **ENV, "OMP_NUM_THREADS": "1", "POLARS_MAX_THREADS": "1"}
    subprocess.run(
        [sys.executable, "-c", _WATCH, str(log), *args],
        cwd=cwd,
        env=env,
        check=True,
        capture_output=True,
        timeout=300,
    )
    real = cwd.resolve()
    return {
        Path(p)
        for p in json.loads(log.read_text())
        if Path(p).resolve().is_relative_to(real) and Path(p).is_file()
    }


def _copy_as(folder: Path, name: str, quantiles: str | None, meta: str | None) -> None:
    shutil.copy(folder / "m.jsonl", folder / name)
    if quantiles:
        (folder / quantiles).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(folder / "m.quantiles.jsonl", folder / quantiles)
    if meta:
        (folder / meta).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(folder / "m.meta.json", folder / meta)


# (name of the submission, its quantile sidecar, its metadata sidecar, extra options): each
# layout's sidecars named as a user would, by every naming a reader might follow
LAYOUTS = {
    "txt": ("X.txt", "X.txt.quantiles.jsonl", "X.txt.meta.json", []),
    "txt, stem sidecars": ("Y.txt", "Y.quantiles.jsonl", "Y.meta.json", []),
    "no suffix": ("Z", "Z.quantiles.jsonl", "Z.meta.json", []),
    "jsonl": ("s.jsonl", "s.quantiles.jsonl", "s.jsonl.meta.json", []),
    "vs, txt": ("a.jsonl", "a.quantiles.jsonl", "a.jsonl.meta.json", ["--vs", "V.txt"]),
    "given quantiles and meta": (
        "b.jsonl",
        None,
        None,
        ["--quantiles", "q/b.q.jsonl", "--meta", "meta/b.json"],
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_eval_out_is_never_a_file_eval_reads(
    world: dict[str, Any], tmp_path: Path, layout: str
) -> None:
    folder = sandbox(world, tmp_path / "box")
    name, quantiles, meta, extra = LAYOUTS[layout]
    _copy_as(folder, name, quantiles, meta)
    for other in ("V.txt",):
        _copy_as(folder, other, other + ".quantiles.jsonl", other + ".meta.json")
    _copy_as(folder, "unused", "q/b.q.jsonl", "meta/b.json")
    args = ["eval", name, "--dataset", "ds", "--resamples", "3", *extra]
    read = _files_read(args, folder)
    assert len({p for p in read if "ds" not in p.parts}) >= 2, read  # a submission, a sidecar
    before = tree_digest(folder)
    for path in sorted(read):
        out = invoke([*args, "--out", os.path.relpath(path, folder)], folder)
        check(out, (layout, path.name))
        assert out.code == 2 and "--out" in out.output, (path, out.output[-2000:])
        assert tree_digest(folder) == before, path


def test_eval_out_as_the_sidecar_of_a_txt_submission(world: dict[str, Any], tmp_path: Path) -> None:
    """The case of the issue, quickly: X.txt reads X.txt.quantiles.jsonl."""
    folder = sandbox(world, tmp_path)
    _copy_as(folder, "X.txt", "X.txt.quantiles.jsonl", "X.txt.meta.json")
    before = tree_digest(folder)
    for extra in ([], ["--vs", "X.txt"]):
        args = ["eval", "m.jsonl" if extra else "X.txt", *extra, "--dataset", "ds"]
        out = invoke([*args, "--resamples", "3", "--out", "X.txt.quantiles.jsonl"], folder)
        check(out, extra)
        assert out.code == 2, out.output[-2000:]
    assert tree_digest(folder) == before


def _build_cases(folder: Path) -> dict[str, list[str]]:
    shutil.copytree(folder / "ds", folder / "prev")
    shutil.copytree(folder / "raw", folder / "prev" / "raw")  # a source kept in a release
    (folder / "alias").symlink_to(folder / "prev")
    return {
        "out is --previous": ["--raw", "raw", "--previous", "prev", "--out", "prev"],
        "out is --previous by a link": ["--raw", "raw", "--previous", "prev", "--out", "alias"],
        "out is --previous, spelled otherwise": [
            "--raw",
            "raw",
            "--previous",
            "prev",
            "--out",
            "out/../prev/",
        ],
        "out holds --raw": ["--raw", "prev/raw", "--out", "prev"],
        "out is --raw": ["--raw", "ds", "--out", "ds"],
        "out is --crawl-dir": [
            "--source",
            "simulated",
            "--scale",
            "tiny",
            "--crawl-dir",
            "prev",
            "--out",
            "prev",
        ],
        "out holds --crawl-dir": [
            *("--source", "simulated", "--scale", "tiny"),
            *("--crawl-dir", "prev/raw", "--out", "prev"),
        ],
    }


@pytest.mark.parametrize(
    "case",
    [
        "out is --previous",
        "out is --previous by a link",
        "out is --previous, spelled otherwise",
        "out holds --raw",
        "out is --raw",
        "out is --crawl-dir",
        "out holds --crawl-dir",
    ],
)
def test_build_never_replaces_what_it_reads(
    world: dict[str, Any], tmp_path: Path, case: str
) -> None:
    folder = sandbox(world, tmp_path)
    args = _build_cases(folder)[case]
    before = {n: tree_digest(folder / n) for n in ("prev", "ds", "raw")}
    out = invoke(["build", *args], folder)
    check(out, case)
    assert out.code == 2 and "--out" in out.output, out.output[-2000:]
    assert {n: tree_digest(folder / n) for n in before} == before


# ------------------------------------------------------------ publish: nothing half-published

TOKEN = "hf_" + "writes" * 3


@pytest.fixture()
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubServer]:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    with serve_hub(tmp_path / "hub-store", tokens={TOKEN: "alice"}) as server:
        yield server


def _refs(hub: HubServer) -> tuple[dict[str, str], dict[str, str]]:
    refs = HfApi(endpoint=hub.url, token=TOKEN).list_repo_refs("org/b", repo_type="dataset")
    return (
        {b.name: b.target_commit for b in refs.branches},
        {t.name: t.target_commit for t in refs.tags},
    )


@pytest.mark.parametrize("change", ["card edited", "file added", "file removed", "unchanged"])
def test_a_tag_naming_another_commit_moves_no_ref(
    hub: HubServer, fixture_dataset: Path, tmp_path: Path, change: str
) -> None:
    publish = ["publish", str(fixture_dataset), "--repo-id", "org/b", "--endpoint", hub.url]
    env = {"HF_TOKEN": TOKEN}
    (fixture_dataset / "figures").mkdir(exist_ok=True)
    (fixture_dataset / "figures" / "extra.svg").write_text("<svg/>")
    assert invoke([*publish, "--tag", "v1"], tmp_path, env).code == 0
    card = fixture_dataset / "README.md"
    card.write_text(card.read_text(encoding="utf-8") + "\nnew\n", encoding="utf-8")
    assert invoke([*publish, "--tag", "v2"], tmp_path, env).code == 0  # main moves past v1
    if change == "card edited":
        card.write_text(card.read_text(encoding="utf-8") + "\nmore\n", encoding="utf-8")
    elif change == "file added":
        (fixture_dataset / "figures" / "new.svg").write_text("<svg/>")
    elif change == "file removed":
        (fixture_dataset / "figures" / "extra.svg").unlink()
    before = _refs(hub)
    commits = hub.traffic.count("POST", r"/commit/main$")
    out = invoke([*publish, "--tag", "v1"], tmp_path, env)
    check(out, change)
    assert out.code == 2 and "v1" in out.output, out.output[-2000:]
    assert _refs(hub) == before  # main and every tag as they were
    assert hub.traffic.count("POST", r"/commit/main$") == commits
