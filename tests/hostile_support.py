"""What the hostile-input sweeps of issue 37 share (tests/hostile/test_{secrets,writes,injection,
messages}.py): a small world (a dataset, a scored submission with its sidecars, a model, a raw
store, a workflow), a private sandbox copy of it per case, and every text or path option of
every command, found by walking the click group, each with a valid invocation to add it to."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import click
from fuzz_support import invoke

from gharuntime.cli.main import cli

# A valid invocation per command; a command not named here meets its usage checks instead.
BASE = {
    "validate": ["validate", "ds"],
    "baseline": ["baseline", "median", "--dataset", "ds", "--out", "out/x.jsonl"],
    "predict": ["predict", "wf.yml", "--model", "m.model"],
    "eval": ["eval", "m.jsonl", "--dataset", "ds", "--resamples", "3"],
    "build": ["build", "--raw", "raw", "--out", "out/ds"],
    "crawl": ["crawl", "--out", "out/raw", "--repos", "repos.txt", "--max-retries", "0"],
    "simulate dump": ["simulate", "dump", "--repos", "2", "--workers", "1", "--out", "out/raw"],
    "diff": ["diff", "ds", "ds"],
    "download": ["download", "a/b"],
    "publish": ["publish", "ds", "--repo-id", "a/b"],
}
# serving forever, or a whole pipeline per value, is not a sweep case
SKIPPED = {"simulate serve", "pipeline"}


def build_world(root: Path, dataset: Path) -> dict[str, Any]:
    """The world under `root`: ds (a copy of `dataset`), m.jsonl scored by the median baseline
    (with m.meta.json and m.quantiles.jsonl), m.model, raw (a dumped world), wf.yml."""
    from gharuntime.sim.dump import dump_world
    from gharuntime.sim.world import Scale, World

    shutil.copytree(dataset, root / "ds")
    out = invoke(["baseline", "median", "--dataset", "ds", "--out", "m.jsonl"], root)
    assert out.code == 0, out.output
    dump_world(World(3, Scale(3, 1.0, 3.0, 30)), root / "raw", logs=False, workers=1)
    (root / "wf.yml").write_text(
        "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps: [{run: pytest}]\n"
    )
    (root / "repos.txt").write_text("octo/hello\n")
    return {"root": root}


def sandbox(world: dict[str, Any], folder: Path) -> Path:
    """A private copy of the world in `folder`, with an empty `out/` for outputs."""
    root = world["root"]
    for name in ("ds", "m.model", "raw"):
        shutil.copytree(root / name, folder / name, symlinks=True)
    for name in ("m.jsonl", "m.meta.json", "m.quantiles.jsonl", "wf.yml", "repos.txt"):
        shutil.copy(root / name, folder / name)
    (folder / "out").mkdir()
    return folder


def text_options() -> list[tuple[str, list[str], str]]:
    """(command, its valid invocation, option) for every option that takes text or a path."""
    found = []

    def walk(group: click.Group, prefix: str) -> None:
        for name, cmd in sorted(group.commands.items()):
            full = f"{prefix} {name}".strip()
            if isinstance(cmd, click.Group):
                walk(cmd, full)
                if not cmd.invoke_without_command:
                    continue
            if full in SKIPPED:
                continue
            for p in cmd.params:
                t = p.type
                skip = (
                    click.types.IntParamType,
                    click.types.FloatParamType,
                    click.Choice,
                    click.types.BoolParamType,
                    click.Tuple,
                )
                if (
                    isinstance(t, skip)
                    or getattr(p, "is_flag", False)
                    or getattr(p, "hidden", False)
                ):
                    continue
                if isinstance(p, click.Option):
                    found.append((full, BASE.get(full, full.split()), p.opts[0]))

    walk(cli, "")
    return found
