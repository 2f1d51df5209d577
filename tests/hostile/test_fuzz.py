"""Fuzzing harness (issue 14): hypothesis-generated hostile input at every boundary, each run
held to the same promises (tests/fuzz_support.check): exit code 0, 1 or 2 (or the boundary's
own error type, for library readers), no traceback, no secret in the output, nothing written on
refusal, and bounded memory for the heavy cases (a subprocess under RLIMIT_AS).

Fast by default (the `default` profile in conftest.py); for thousands of cases:

    python -m pytest tests/hostile/test_fuzz.py --hypothesis-profile=deep
"""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import shutil
import signal
from pathlib import Path
from typing import Any
from unittest import mock

import click
import pytest
import yaml
from fuzz_support import SECRET, check, invoke, run_limited, tree_digest
from hypothesis import given, settings
from hypothesis import strategies as st

from gharuntime.baselines.method import MethodError
from gharuntime.baselines.model_io import load_model
from gharuntime.builder.build import BuildError, build
from gharuntime.cli.main import cli
from gharuntime.contract import RawKind
from gharuntime.dataset import DatasetError, load, read_manifest
from gharuntime.eval.api import evaluate_file
from gharuntime.eval.evaluate import InvalidSubmission
from gharuntime.rawstore import RawStoreWriter
from gharuntime.sim.server import SimServer
from gharuntime.source_kinds import GhalogsConfig
from gharuntime.source_kinds.raw import RawSource
from gharuntime.workflow import WorkflowError, expand_jobs, parse_workflow

# ---------------------------------------------------------------------------------- strategies

# JSON values of every shape, with the numbers and strings that break readers.
ODD_NUMBERS = st.sampled_from(
    [0, -1, 1e308, -1e308, 2**63, -(2**63) - 1, 10**30, 1e-320, 0.5, 2**31, True, False]
)
ODD_STRINGS = st.sampled_from(
    [
        "",
        " ",
        "\n",
        "\x00",
        "\ud800",
        "\udcff",
        "ü",
        "../../etc/passwd",
        "/etc/passwd",
        "C:\\x",
        "x" * 300,
        "${{ secrets.X }}",
        # token-shaped, but not the token: an input a command may name back in its error (the
        # promise is that the token in the environment never shows, not that inputs never do)
        "ghp_" + "Value" * 7 + "x",
        "1e400",
        "NaN",
        "-1",
        "[]",
        "{}",
        "q[bold]w[/bold]e[/x]",  # rich markup: must show verbatim, never raise MarkupError
    ]
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True),
    ODD_NUMBERS,
    st.text(max_size=20),
    ODD_STRINGS,
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def deep(depth: int) -> str:
    return "[" * depth + "]" * depth


def submission_line(ids: list[str]) -> st.SearchStrategy[bytes]:
    good = st.builds(
        lambda i, v: json.dumps({"id": i, "duration_s": v}).encode(),
        st.sampled_from(ids),
        st.floats(min_value=0, max_value=1e6),
    )
    odd_record = st.builds(
        lambda i, v, extra: json.dumps({"id": i, "duration_s": v, **extra}).encode(),
        st.one_of(st.sampled_from(ids), JSON),
        JSON,
        st.dictionaries(st.sampled_from(["queue_s", "x", "id2", ""]), JSON, max_size=2),
    )
    raw = st.one_of(
        st.binary(max_size=60),
        st.sampled_from(
            [
                b'{"id": "\\ud800", "duration_s": 1}',
                b'{"id": "1", "duration_s": 1, "duration_s": 2}',
                deep(5000).encode(),
                b'{"id": ' + deep(3000).encode() + b"}",
                b"\xff\xfe{}",
                b'{"id": "1", "duration_s": 1e999}',
                b"",
            ]
        ),
    )
    return st.one_of(good, good, odd_record, raw)


# ------------------------------------------------------------------------------------ fixtures


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, fixture_dataset_master: Path) -> dict[str, Any]:
    """A dataset, a fitted model, a valid submission and a small raw store, made once."""
    root = tmp_path_factory.mktemp("fuzz")
    ds = root / "ds"
    shutil.copytree(fixture_dataset_master, ds)
    out = invoke(["baseline", "median", "--dataset", str(ds), "--out", str(root / "m.jsonl")], root)
    assert out.code == 0, out.output
    from gharuntime.sim.dump import dump_world
    from gharuntime.sim.world import Scale, World

    dump_world(World(3, Scale(3, 1.0, 3.0, 30)), root / "raw", logs=False, workers=1)
    (root / "wf.yml").write_text(
        "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps: [{run: pytest}]\n"
    )
    (root / "repos.txt").write_text("octo/hello\n")
    ids = [json.loads(line)["id"] for line in (root / "m.jsonl").read_text().splitlines()]
    return {"root": root, "ds": ds, "model": root / "m.model", "sub": root / "m.jsonl", "ids": ids}


# ------------------------------------------------------------------------- submission lines


@given(data=st.data())
def test_fuzz_submission_lines(world: dict[str, Any], tmp_path_factory: Any, data: Any) -> None:
    lines = data.draw(st.lists(submission_line(world["ids"]), max_size=12))
    folder = tmp_path_factory.mktemp("sub")
    sub = folder / "s.jsonl"
    sub.write_bytes(b"\n".join(lines) + (b"\n" if data.draw(st.booleans()) else b""))
    shutil.copy(world["sub"].with_name("m.meta.json"), folder / "s.meta.json")
    before = tree_digest(world["ds"])
    try:
        result = evaluate_file(sub, world["ds"], resamples=5)
        assert json.dumps(result, allow_nan=False)
    except InvalidSubmission as exc:
        assert exc.problems.total > 0
        text = json.dumps(exc.problems.to_json())
        assert SECRET not in text
    assert tree_digest(world["ds"]) == before


# -------------------------------------------------------------------------------- manifests


def _mutate_manifest(manifest: dict[str, Any], how: str, value: Any) -> dict[str, Any]:
    m = json.loads(json.dumps(manifest))
    if how == "drop_files":
        m.pop("files", None)
    elif how == "files":
        m["files"] = value
    elif how == "entry":
        if m["files"]:
            m["files"][0] = value
    elif how == "path":
        m["files"][0]["path"] = value
    elif how == "field":
        m["files"][0][value if isinstance(value, str) else "rows"] = value
    return m


@pytest.mark.slow
@given(
    how=st.sampled_from(["drop_files", "files", "entry", "path", "field"]),
    value=st.one_of(JSON, ODD_STRINGS, st.sampled_from(["/etc/passwd", "../x", "data/../../x"])),
)
def test_fuzz_manifests(world: dict[str, Any], tmp_path_factory: Any, how: str, value: Any) -> None:
    ds = tmp_path_factory.mktemp("m") / "ds"
    shutil.copytree(world["ds"], ds)
    manifest = json.loads((ds / "manifest.json").read_text())
    (ds / "manifest.json").write_text(json.dumps(_mutate_manifest(manifest, how, value)))
    try:
        read_manifest(ds)
        load(ds, "temporal", "test")
    except DatasetError:
        pass
    out = invoke(["validate", str(ds)], ds.parent)
    check(out, (how, value))
    out = invoke(["eval", "--gold", "--dataset", str(ds), "--resamples", "3"], ds.parent)
    check(out, (how, value))


# ----------------------------------------------------------------------------- model folders


@pytest.mark.slow
@given(
    target=st.sampled_from(["model.json", "importances.json", "state", "model_files"]),
    damage=st.sampled_from(["delete", "garbage", "truncate", "json", "outside"]),
    junk=st.binary(max_size=40),
    value=JSON,
)
def test_fuzz_model_folders(
    world: dict[str, Any], tmp_path_factory: Any, target: str, damage: str, junk: bytes, value: Any
) -> None:
    model = tmp_path_factory.mktemp("model") / "m.model"
    shutil.copytree(world["model"], model)
    meta_path = model / "model.json"
    meta = json.loads(meta_path.read_text())
    if target in ("state", "model_files"):
        if damage == "outside":
            meta["state"] = {"model_files": {"duration_s": "../../../etc/passwd"}}
        else:
            meta[target] = value
        meta_path.write_text(json.dumps(meta))
    else:
        path = model / target
        if damage == "delete":
            path.unlink()
        elif damage == "garbage":
            path.write_bytes(junk)
        elif damage == "truncate":
            path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])
        else:
            path.write_text(json.dumps(value))
    with contextlib.suppress(MethodError):
        load_model(model)
    out = invoke(["predict", str(world["root"] / "wf.yml"), "--model", str(model)], model.parent)
    check(out, (target, damage, value))


# ---------------------------------------------------------------------------- workflow YAML

YAML_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-5, 300), st.text(max_size=10), ODD_STRINGS),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.dictionaries(
            st.sampled_from(
                [
                    "runs-on",
                    "steps",
                    "strategy",
                    "matrix",
                    "include",
                    "exclude",
                    "needs",
                    "uses",
                    "name",
                    "run",
                    "with",
                    "os",
                    "py",
                    "if",
                    "services",
                    "container",
                ]
            ),
            inner,
            max_size=4,
        ),
    ),
    max_leaves=20,
)


@given(
    # job ids YAML reads as other types too: `1:`, `true:`, `null:`, `1.5:` (issue 26)
    jobs=st.dictionaries(
        st.one_of(
            st.text(min_size=1, max_size=8),
            st.integers(-5, 300),
            st.booleans(),
            st.none(),
            st.sampled_from([1.5, -0.0, 1e300]),
        ),
        YAML_VALUES,
        max_size=4,
    ),
    tail=st.sampled_from(
        [
            "",
            "\nx: &a [1, 2]\ny: [*a, *a, *a]\n",
            "\n: :\n",
            "\n\t- [",
            "\n" + deep(300),
            "\n--- \n---\n",
            "\nz: !!python/object:os.system x\n",
        ]
    ),
)
def test_fuzz_workflow_yaml(jobs: dict[Any, Any], tail: str) -> None:
    text = yaml.safe_dump({"on": "push", "jobs": jobs}, sort_keys=False) + tail
    try:
        wf = parse_workflow(text, "fuzz.yml")
        expand_jobs(wf)
    except WorkflowError as exc:
        assert "fuzz.yml" in str(exc)


# -------------------------------------------------------------------------- raw-store records


@pytest.mark.slow
@given(
    records=st.lists(
        st.tuples(
            st.sampled_from(list(RawKind)),
            st.text(max_size=8),
            JSON,
            st.one_of(st.none(), st.integers()),
        ),
        min_size=1,
        max_size=8,
    )
)
def test_fuzz_raw_store_records(
    world: dict[str, Any], tmp_path_factory: Any, records: list[Any]
) -> None:
    store = tmp_path_factory.mktemp("raw") / "store"
    shutil.copytree(world["root"] / "raw", store)
    writer = RawStoreWriter(store, prefix="fuzz")
    for kind, key, body, rid in records:
        writer.add(kind, key, body, rid if rid is None or abs(rid) < 2**62 else None)
    writer.close()
    try:
        result = build(RawSource([store]), store.parent / "ds")
    except BuildError:
        return
    assert result.rows > 0


# -------------------------------------------------------------------------- GHALogs records


@pytest.mark.slow
@given(
    field=st.sampled_from(
        [
            "id",
            "run_attempt",
            "run_number",
            "created_at",
            "updated_at",
            "workflow_id",
            "jobs",
            "logs_archive",
            "head_branch",
            "repository",
        ]
    ),
    value=st.one_of(
        JSON,
        st.sampled_from(
            [
                1e400,
                2**70,
                -(2**70),
                "1e999",
                {"path": "/etc/passwd"},
                {"path": "/data/logs/../../../../etc/x.tar.gz"},
            ]
        ),
    ),
)
def test_fuzz_ghalogs_records(
    shared_dir: Path, tmp_path_factory: Any, field: str, value: Any
) -> None:
    ref = shared_dir / "reference/ghalogs"
    run = json.loads((ref / "run.json").read_text())
    repo = json.loads((ref / "repository.json").read_text())
    run[field] = value
    folder = tmp_path_factory.mktemp("gha")
    for name, doc in (("runs.json.gz", run), ("repositories.json.gz", repo)):
        with gzip.open(folder / name, "wt", encoding="utf-8") as fh:
            fh.write(json.dumps(doc, default=str) + "\n")
    (folder / "logs").mkdir()
    with contextlib.suppress(BuildError):
        build(GhalogsConfig(folder, folder / "logs").source(), folder / "out")


# ------------------------------------------------------------------- CLI sweep (all commands)

ODD_VALUES = {
    "int": st.sampled_from(
        ["-1", "0", "99999999999999999999999", "nan", "1e3", "-9223372036854775809", "0x10"]
    ),
    "float": st.sampled_from(["nan", "inf", "-inf", "-1", "0", "1e308", "1e-320", "1,5"]),
    "path": st.sampled_from(
        [
            "nonexistent",
            "/dev/null",
            "dir",
            "nonutf8.txt",
            "empty.txt",
            "/",
            "/proc/self/mem",
            "x" * 300,
            "ds/manifest.json",
            "\udcff",
        ]
    ),
    "str": st.one_of(ODD_STRINGS, st.text(max_size=30)),
}

# A valid invocation per command (new commands get none: their odd options meet usage checks).
BASE = {
    "validate": ["validate", "ds"],
    "baseline": ["baseline", "median", "--dataset", "ds", "--out", "out/x.jsonl"],
    "predict": ["predict", "wf.yml", "--model", "m.model"],
    "eval": ["eval", "m.jsonl", "--dataset", "ds", "--resamples", "3"],
    "build": ["build", "--raw", "raw", "--out", "out/ds"],
    "crawl": ["crawl", "--out", "out/raw", "--repos", "repos.txt", "--max-retries", "0"],
    "simulate dump": ["simulate", "dump", "--repos", "2", "--workers", "1", "--out", "out/raw"],
    # serving forever is not a test: a host that cannot be bound ends it after all the checks
    # (and _sweep_one makes one that can be bound return at once, e.g. a fuzzed --host 0)
    "simulate serve": ["simulate", "serve", "--repos", "2", "--host", "256.0.0.1"],
    # the default (small world, LASER, 1000 resamples) is minutes an example: the smallest run
    "pipeline": ["pipeline", "--scale", "tiny", "--resamples", "3", "--out", "out/p"],
}


def _kind(param: click.Parameter) -> str | None:
    t = param.type
    if isinstance(t, click.types.IntParamType):
        return "int"
    if isinstance(t, click.types.FloatParamType):
        return "float"
    if isinstance(t, click.Path):
        return "path"
    if isinstance(t, (click.Choice, click.types.BoolParamType, click.Tuple)) or getattr(
        param, "is_flag", False
    ):
        return None
    return "str"


def _options() -> list[tuple[str, list[str], str, str]]:
    found = []

    def walk(group: click.Group, prefix: str) -> None:
        for name, cmd in sorted(group.commands.items()):
            full = f"{prefix} {name}".strip()
            if isinstance(cmd, click.Group):
                walk(cmd, full)
                if not cmd.invoke_without_command:
                    continue  # a group that runs on its own (leaderboard) has options too
            for p in cmd.params:
                kind = _kind(p)
                if kind and isinstance(p, click.Option) and not p.hidden:
                    found.append((full, BASE.get(full, full.split()), p.opts[0], kind))

    walk(cli, "")
    return found


OPTIONS = _options()


def _sandbox(world: dict[str, Any], folder: Path) -> Path:
    for name in ("ds", "m.model", "raw"):
        shutil.copytree(world["root"] / name, folder / name, symlinks=True)
    for name in ("m.jsonl", "m.meta.json", "wf.yml", "repos.txt"):
        shutil.copy(world["root"] / name, folder / name)
    (folder / "dir").mkdir()
    (folder / "nonutf8.txt").write_bytes(b"\xff\xfe\x00bad\n")
    (folder / "empty.txt").write_bytes(b"")
    (folder / "out").mkdir()
    return folder


def _close_at_once(server: SimServer) -> None:
    """What `simulate serve` runs in the sweep: the server bound, then closed (only the CLI's
    serve-forever is replaced; `pipeline` serves its world through SimServer.start)."""
    server._httpd.server_close()


def _sweep_one(
    world: dict[str, Any], folder: Path, base: list[str], option: str, value: str
) -> None:
    """One command of the sweep, held to the harness's promises. A server that binds (a fuzzed
    --host such as "0") returns instead of serving forever; the socket is still closed."""
    command = " ".join(base[:2])
    _sandbox(world, folder)
    inputs = {name: tree_digest(folder / name) for name in ("ds", "m.model", "raw")}
    sigterm = signal.getsignal(signal.SIGTERM)  # `simulate serve` sets its own, for a process
    try:
        with mock.patch.object(SimServer, "serve_forever", _close_at_once):
            out = invoke([*base, option, value], folder)
    finally:
        signal.signal(signal.SIGTERM, sigterm)
    check(out, (command, option, value))
    for name, digest in inputs.items():  # inputs are never changed
        assert tree_digest(folder / name) == digest, (command, option, value, name)
    if out.code == 2:  # a refusal writes nothing
        assert not any((folder / "out").iterdir()), (command, option, value)


@pytest.mark.slow
@given(data=st.data())
def test_fuzz_cli_sweep(world: dict[str, Any], tmp_path_factory: Any, data: Any) -> None:
    """Every option of every command (found by walking the click group), with odd values."""
    _, base, option, kind = data.draw(st.sampled_from(OPTIONS))
    _sweep_one(world, tmp_path_factory.mktemp("cli"), base, option, data.draw(ODD_VALUES[kind]))


@pytest.mark.parametrize(
    ("base", "option", "value"),
    [
        (BASE["simulate serve"], "--host", "0"),  # bound every interface and served forever
        (BASE["simulate serve"], "--host", ""),  # the same, printing the URL http://:8765
        (BASE["crawl"], "--out", "x" * 300),  # issue 26's explore run: ENAMETOOLONG traceback
    ],
)
def test_sweep_cases_found_by_explore(
    world: dict[str, Any], tmp_path: Path, base: list[str], option: str, value: str
) -> None:
    """Sweep cases the explore profile found hanging or taking minutes, fixed here."""
    _sweep_one(world, tmp_path, base, option, value)


def test_the_sweep_covers_every_command() -> None:
    commands = {c for c, _, _, _ in OPTIONS}
    assert {"eval", "build", "crawl", "predict", "baseline", "simulate dump"} <= commands


# ------------------------------------------------------------ heavy inputs, memory-bounded


@pytest.mark.slow
@pytest.mark.parametrize(
    "case",
    ["alias_bomb", "huge_line", "deep_json"],
)
def test_heavy_inputs_stay_within_memory(world: dict[str, Any], tmp_path: Path, case: str) -> None:
    """Each heavy input in a subprocess capped at 2 GB of address space: refused with exit 2
    (or scored as invalid), never a MemoryError or a kill."""
    folder = _sandbox(world, tmp_path)
    if case == "alias_bomb":
        rows = "\n".join(
            f"  l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]" for i in range(1, 10)
        )
        (folder / "bomb.yml").write_text(
            "on: push\nx:\n  l0: &l0 [a]\n"
            + rows
            + "\njobs:\n  a:\n    runs-on: ubuntu-latest\n    strategy: {matrix: {v: *l9}}\n"
            "    steps: [{run: x}]\n"
        )
        args = ["predict", "bomb.yml", "--model", "m.model"]
    else:
        with open(folder / "big.jsonl", "wb") as fh:
            if case == "huge_line":
                for _ in range(200):
                    fh.write(b"a" * 2**20)  # 200 MB, no newline
            else:
                fh.write(deep(5_000_000).encode())
        shutil.copy(folder / "m.meta.json", folder / "big.meta.json")
        args = ["eval", "big.jsonl", "--dataset", "ds", "--resamples", "3"]
    out = run_limited(args, folder, memory_mb=2048)
    check(out, case)
    assert out.code == 2, out.output[-2000:]


# ------------------------------------------------------------------- repository metadata


@given(
    meta=st.dictionaries(
        st.sampled_from(
            [
                "id",
                "full_name",
                "language",
                "stargazers_count",
                "size",
                "fork",
                "topics",
                "created_at",
                "repo_stars",
                "repo_language",
                "repo_size_kb",
                "default_branch",
            ]
        ),
        st.one_of(JSON, ODD_NUMBERS, st.sampled_from([1e400, -1e400, 2**70])),
        max_size=5,
    )
)
def test_fuzz_repo_meta(world: dict[str, Any], tmp_path_factory: Any, meta: dict[str, Any]) -> None:
    folder = tmp_path_factory.mktemp("meta")
    (folder / "meta.json").write_text(json.dumps(meta))
    out = invoke(
        [
            "predict",
            str(world["root"] / "wf.yml"),
            "--model",
            str(world["model"]),
            "--repo-meta",
            "meta.json",
            "--json",
        ],
        folder,
    )
    check(out, meta)
    assert out.code in (0, 2)


# --------------------------------------------- class 1 (issue 26): text is shown verbatim

# Rich markup that vanishes ("qwe") when parsed and raises MarkupError at the stray `[/x]`.
MARKUP = "q[bold]w[/bold]e[/x]"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("base", "option"),
    [(base, option) for _, base, option, kind in OPTIONS if kind in ("str", "path")],
    ids=[f"{c} {o}" for c, _, o, kind in OPTIONS if kind in ("str", "path")],
)
def test_markup_in_every_option_is_shown_verbatim(
    world: dict[str, Any], tmp_path: Path, base: list[str], option: str
) -> None:
    """Every text or path option of every command, given rich markup: shown as given (or not
    at all), never parsed into styling and never a MarkupError.

    `pipeline --out` is checked without running a pipeline (minutes): a file where the
    folder's first part would go makes it refuse at once, after the line that names the folder
    and in the refusal, both of which must show it verbatim."""
    blocked = base[0] == "pipeline" and option == "--out"
    if blocked:
        (tmp_path / MARKUP.split("/")[0]).write_text("not a folder")
    _sweep_one(world, tmp_path, base, option, MARKUP)
    out = invoke([*base, option, MARKUP], tmp_path)
    assert "qwe" not in out.output, out.output[-2000:]
    if blocked:
        assert out.code == 2 and out.output.count(MARKUP) >= 2, out.output[-2000:]


# ------------------------ classes 1 and 2 (issue 26): names with brackets, through every stage

# A folder name that rich would parse ([bold], and [/x] an error) and polars would glob ([1]).
ODD_DIR = "in[1][bold][/x]"


def test_bracketed_names_through_every_command(world: dict[str, Any], tmp_path: Path) -> None:
    """Inputs and outputs whose paths (and a job whose name) hold `[...]`: every stage reads
    and writes them by path and prints them as they are."""
    root = tmp_path / "in[1][bold]["
    root.mkdir()
    odd = Path(ODD_DIR)  # relative to tmp_path: in[1][bold][ / x]
    (tmp_path / odd).mkdir()
    shutil.copytree(world["ds"], tmp_path / odd / "ds[2]")
    shutil.copytree(world["ds"], tmp_path / odd / "ds")  # a leaderboard names its dataset by it
    shutil.copytree(world["root"] / "raw", tmp_path / odd / "raw[3]")
    shutil.copytree(world["model"], tmp_path / odd / "m[4].model")
    (tmp_path / odd / "wf[5].yml").write_text(
        "on: push\njobs:\n  build:\n    name: build [linux]\n    runs-on: ubuntu-latest\n"
        "    steps: [{run: pytest}]\n"
    )
    ds, sub, res = odd / "ds[2]", odd / "sub[6].jsonl", odd / "res[7].json"
    steps = [
        (["validate", str(ds)], [str(ds)]),
        (["baseline", "median", "--dataset", str(ds), "--out", str(sub)], [str(sub)]),
        (["eval", str(sub), "--dataset", str(ds), "--resamples", "3"], []),
        (
            ["eval", str(sub), "--dataset", str(odd / "ds"), "--resamples", "3", "--out", str(res)],
            [],
        ),
        (["predict", str(odd / "wf[5].yml"), "--model", str(odd / "m[4].model")], ["[linux]"]),
        (["build", "--raw", str(odd / "raw[3]"), "--out", str(odd / "built[8]")], []),
        (["validate", str(odd / "built[8]")], [str(odd / "built[8]")]),
        (["leaderboard", "add", str(res), "--results", str(odd / "results[9]")], [str(res)]),
        (
            ["leaderboard", "--results", str(odd / "results[9]"), "--out", str(odd / "b[0]")],
            [str(odd / "b[0]")],
        ),
    ]
    for args, shown in steps:
        out = invoke(args, tmp_path)
        check(out, args)
        assert out.code == 0, (args, out.output[-3000:])
        for text in shown:
            assert text in out.output, (args, text, out.output[-3000:])


def test_one_place_shows_text_and_reads_parquet() -> None:
    """The rules of classes 1 and 2 hold by construction: only gharuntime/cli/output.py meets
    rich's markup parser, and only gharuntime/parquet.py calls polars' Parquet readers."""
    root = Path(__file__).resolve().parents[2]
    markup = ("markup=True", ".status(", "TextColumn(", "from_markup", '"[red]', '"[green]')
    readers = ("pl.read_parquet", "pl.scan_parquet", "read_parquet_schema")
    found = []
    for folder in ("gharuntime", "baselines", "leaderboard", "crawler"):
        for path in sorted((root / folder).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            rel = path.relative_to(root).as_posix()
            if rel != "gharuntime/cli/output.py":
                found += [(rel, m) for m in markup if m in text]
            if rel != "gharuntime/parquet.py":
                found += [(rel, r) for r in readers if r in text]
    assert not found, found


# ------------------------------------------- class 3 (issue 26): no credentials in any URL

PASSWORD = "Pw" + "S3cr3t" * 3  # what a URL's user:password@ carries; never shown
CRED_URL = f"http://someone:{PASSWORD}@127.0.0.1:9"
ODD_TOKEN = "hf_t\u00e9st\u2603token"  # an HTTP header cannot carry it

# (arguments, extra environment) for every command that takes a URL or reaches the Hub.
URL_CASES = [
    (["download", "a/b", "--endpoint", CRED_URL], {}),
    (["download", "a/b", "--to", "out/d"], {"HF_ENDPOINT": CRED_URL}),
    (["publish", "ds", "--repo-id", "a/b", "--endpoint", CRED_URL], {}),
    (["publish", "ds", "--repo-id", "a/b"], {"HF_ENDPOINT": CRED_URL}),
    (["validate", "a/b"], {"HF_ENDPOINT": CRED_URL}),
    (["eval", "m.jsonl", "--dataset", "a/b", "--resamples", "3"], {"HF_ENDPOINT": CRED_URL}),
    (["eval", "--gold"], {"HF_ENDPOINT": CRED_URL}),
    (["baseline", "median", "--dataset", "a/b", "--out", "out/x.jsonl"], {"HF_ENDPOINT": CRED_URL}),
    (["diff", "a/b", "ds"], {"HF_ENDPOINT": CRED_URL}),
    (["diff", "a/b", "ds", "--endpoint", CRED_URL], {}),
    ([*BASE["crawl"], "--api-url", CRED_URL], {}),
    (BASE["crawl"], {"GITHUB_API_URL": CRED_URL}),
    (
        ["build", "--source", "github", "--repos", "repos.txt", "--out", "out/ds"],
        {"GITHUB_API_URL": CRED_URL},
    ),
]


@pytest.mark.parametrize(("args", "env"), URL_CASES, ids=[" ".join(a[:2]) for a, _ in URL_CASES])
def test_credentials_in_a_url_are_refused_and_never_shown(
    world: dict[str, Any], tmp_path: Path, args: list[str], env: dict[str, str]
) -> None:
    _sandbox(world, tmp_path)
    out = invoke(args, tmp_path, env)
    check(out, args)
    assert out.code == 2, out.output[-2000:]
    assert PASSWORD not in out.output
    assert "user or password" in out.output, out.output[-2000:]
    assert not any((tmp_path / "out").iterdir())


HUB_COMMANDS = [
    ["download", "a/b"],
    ["publish", "ds", "--repo-id", "a/b"],
    ["validate", "a/b"],
    ["eval", "m.jsonl", "--dataset", "a/b", "--resamples", "3"],
]


@pytest.mark.parametrize("args", HUB_COMMANDS, ids=[a[0] for a in HUB_COMMANDS])
def test_a_token_a_header_cannot_carry_is_named(
    world: dict[str, Any], tmp_path: Path, args: list[str]
) -> None:
    """A non-ASCII $HF_TOKEN: a clear refusal naming it, before any request, never quoted."""
    _sandbox(world, tmp_path)
    out = invoke(args, tmp_path, {"HF_TOKEN": ODD_TOKEN, "HF_ENDPOINT": "http://127.0.0.1:9"})
    check(out, args)
    assert out.code == 2, out.output[-2000:]
    assert "$HF_TOKEN" in out.output and "non-ASCII" in out.output, out.output[-2000:]
    assert ODD_TOKEN not in out.output


def test_urls_in_hub_messages_are_scrubbed() -> None:
    from gharuntime.hub.spec import scrub

    text = scrub(f"failed: {CRED_URL}/api and https://tok3n@hub.example/x", None)
    assert PASSWORD not in text and "tok3n" not in text and "127.0.0.1:9/api" in text


# ----------------------------- classes 4-6 (issue 26): result files, reads, output targets


@pytest.fixture(scope="module")
def result_doc(world: dict[str, Any]) -> dict[str, Any]:
    """A real `gharuntime eval --out` result of the sweep's median submission."""
    out = invoke(
        ["eval", "m.jsonl", "--dataset", "ds", "--resamples", "5", "--out", "res.json"],
        world["root"],
    )
    assert out.code == 0, out.output
    doc: dict[str, Any] = json.loads((world["root"] / "res.json").read_text())
    return doc


def _set(doc: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    doc = json.loads(json.dumps(doc))
    *parents, last = path.split("/")
    node: Any = doc
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node.setdefault(key, {})
    if isinstance(node, list):
        node[int(last)] = value
    else:
        node[last] = value
    return doc


# (where, value) that a result must never carry: each refused by `leaderboard add`.
BAD_RESULT_VALUES = [
    ("metrics/duration_s/rmsle/value", float("nan")),
    ("metrics/duration_s/mae/ci_high", float("inf")),
    ("bootstrap/per_resample/duration_s/rmsle/0", float("-inf")),
    ("meta/extra/timing/fit_seconds_per_1000_jobs", float("inf")),
    ("meta/extra/timing/predict_seconds_per_1000_jobs", -1.0),
    ("plot_data/sample/actual/0", 1.7e308),
    ("plot_data/sample/predicted", [1.0]),
    ("plot_data/abs_log_ratio_quantiles/value", [0.1]),
    ("breakdowns/duration_s", "a string"),
    ("breakdowns/duration_s/duration_decile", [1, 2]),
    ("counts/scored", {}),
    ("counts/scored/duration_s", -5),
    ("counts/without_truth/duration_s", -1),
    ("dataset/rows", -1),
    ("meta/method", "median\n"),
    ("meta/method", "evil\n"),
    ("dataset/id", "evil\n"),
    ("meta/method_version", "1\r| fake | row |"),
    ("warnings", ["x\n<!--"]),
    ("name", "a\x00b"),
    ("meta/method_version", "x" * 20_000),
    ("bootstrap/seed", 2**70),
]


def _payload_text(doc: dict[str, Any], where: str, value: Any) -> str:
    return json.dumps(_set(doc, where, value))  # NaN/Infinity written as JSON does not allow


@pytest.mark.parametrize(
    ("where", "value"), BAD_RESULT_VALUES, ids=[f"{w}={v!r:.20}" for w, v in BAD_RESULT_VALUES]
)
def test_leaderboard_refuses_every_bad_value(
    result_doc: dict[str, Any], tmp_path: Path, where: str, value: Any
) -> None:
    """`leaderboard add` refuses it, nothing filed; planted in a results folder, `leaderboard`
    refuses it, nothing written: never a traceback, in either."""
    bad = tmp_path / "bad.json"
    bad.write_text(_payload_text(result_doc, where, value))
    out = invoke(["leaderboard", "add", "bad.json", "--results", "results"], tmp_path)
    check(out, (where, value))
    assert out.code == 2, (where, out.output[-2000:])
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").rglob("*"))
    planted = tmp_path / "planted" / "ds"
    planted.mkdir(parents=True)
    shutil.copy(bad, planted / "temporal-config-median.json")
    out = invoke(["leaderboard", "--results", "planted", "--out", "board"], tmp_path)
    check(out, (where, value))
    assert out.code == 2 and not (tmp_path / "board").exists(), out.output[-2000:]


@pytest.mark.parametrize(
    "text",
    [
        deep(100_000),
        '{"result_version": 2, "x": ' + deep(100_000) + "}",
        '{"result_version": 2, "x": ' + deep(500) + "}",
        '{"result_version": 2, "metrics": NaN}',
        '{"result_version": 2, "x": 1e999}',
    ],
    ids=["deep-100k", "deep-inside", "deep-500", "NaN", "1e999"],
)
def test_leaderboard_refuses_hostile_json(tmp_path: Path, text: str) -> None:
    (tmp_path / "bad.json").write_text(text)
    out = invoke(["leaderboard", "add", "bad.json", "--results", "results"], tmp_path)
    check(out, text[:40])
    assert out.code == 2 and not (tmp_path / "results").exists(), out.output[-2000:]


MARKDOWN_PAYLOADS = st.sampled_from(
    [
        "<script>alert(1)</script>",
        "<!-- hide",
        "a | b | c",
        "`code` *bold* _it_ [link](http://x) ~~s~~ \\",
        "&amp; &lt;",
        "x -->",
        "\u2028line",
    ]
)


@settings(max_examples=8)
@given(
    version=st.one_of(MARKDOWN_PAYLOADS, st.text(max_size=30)),
    warning=st.one_of(MARKDOWN_PAYLOADS, st.text(max_size=30)),
)
def test_text_a_result_holds_cannot_change_the_markdown(
    result_doc: dict[str, Any], tmp_path_factory: Any, version: str, warning: str
) -> None:
    """Any text in a result's free fields (method version, warnings) either is refused or shows
    escaped: the table keeps its one row, no HTML tag or comment opens, no cell is added."""
    folder = tmp_path_factory.mktemp("md")
    doc = _set(_set(result_doc, "meta/method_version", version), "warnings", [warning])
    (folder / "r.json").write_text(json.dumps(doc))
    out = invoke(["leaderboard", "add", "r.json", "--results", "results"], folder)
    check(out, (version, warning))
    if out.code == 2:
        return
    assert out.code == 0, out.output
    out = invoke(["leaderboard", "--results", "results", "--out", "board"], folder)
    assert out.code == 0, out.output
    text = (folder / "board" / "README.md").read_text()
    # the ranked table: its header, its rule and the one result (the tables under it, such as
    # the coverage by recency, come after a line that is not a row)
    lines = text.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("| "))
    rows = []
    for line in lines[first:]:
        if not line.startswith("| "):
            break
        rows.append(line)
    assert len(rows) == 3, rows  # header, rule, one result
    cells = rows[2].replace("\\|", "").count("|")
    assert cells == rows[0].count("|"), rows
    assert "<" not in text.replace("&lt;", "") and "-->" not in text


def test_filing_over_an_unreadable_result_needs_replace(
    result_doc: dict[str, Any], tmp_path: Path
) -> None:
    (tmp_path / "r.json").write_text(json.dumps(result_doc))
    out = invoke(["leaderboard", "add", "r.json", "--results", "results"], tmp_path)
    assert out.code == 0, out.output
    (filed,) = (tmp_path / "results").rglob("*.json")
    filed.write_text("{broken")
    out = invoke(["leaderboard", "add", "r.json", "--results", "results"], tmp_path)
    check(out, "unreadable")
    assert out.code == 2 and "--replace" in out.output and filed.read_text() == "{broken"
    out = invoke(["leaderboard", "add", "r.json", "--results", "results", "--replace"], tmp_path)
    assert out.code == 0 and json.loads(filed.read_text()) == result_doc


@pytest.mark.parametrize("blocked", ["index.html", "README.md"])
def test_leaderboard_checks_both_outputs_before_writing(
    result_doc: dict[str, Any], tmp_path: Path, blocked: str
) -> None:
    (tmp_path / "r.json").write_text(json.dumps(result_doc))
    assert invoke(["leaderboard", "add", "r.json", "--results", "results"], tmp_path).code == 0
    board = tmp_path / "board"
    board.mkdir()
    (board / "README.md").write_text("old")
    (board / "index.html").write_text("old")
    (board / blocked).unlink()
    (board / blocked).mkdir()
    out = invoke(["leaderboard", "--results", "results", "--out", "board"], tmp_path)
    check(out, blocked)
    assert out.code == 2, out.output
    other = "README.md" if blocked == "index.html" else "index.html"
    assert (board / other).read_text() == "old"


# Every file a command reads whole, named so that {} is replaced by the hostile file.
READ_CASES = {
    "leaderboard add": ["leaderboard", "add", "{}", "--results", "out/results"],
    "predict workflow": ["predict", "{}", "--model", "m.model"],
    "predict --repo-meta": ["predict", "wf.yml", "--model", "m.model", "--repo-meta", "{}"],
    "predict model.json": ["predict", "wf.yml", "--model", "m.model"],
    "predict --prices": ["predict", "wf.yml", "--model", "m.model", "--prices", "{}"],
    "eval submission": ["eval", "{}", "--dataset", "ds", "--resamples", "3"],
    "eval --meta": ["eval", "m.jsonl", "--dataset", "ds", "--resamples", "3", "--meta", "{}"],
    "eval --vs": ["eval", "m.jsonl", "--vs", "{}", "--dataset", "ds", "--resamples", "3"],
    "validate manifest.json": ["validate", "ds"],
    "baseline manifest.json": ["baseline", "median", "--dataset", "ds", "--out", "out/x.jsonl"],
    "crawl --repos": [*BASE["crawl"][:3], "--repos", "{}", "--max-retries", "0"],
    "crawl --token-file": [*BASE["crawl"], "--token-file", "{}"],
    "simulate serve --tokens": [*BASE["simulate serve"], "--tokens", "{}"],
}
_INSIDE = {"predict model.json": "m.model/model.json", "validate manifest.json": "ds/manifest.json"}
_INSIDE["baseline manifest.json"] = "ds/manifest.json"


def _hostile_file(folder: Path, case: str, kind: str) -> list[str]:
    """Plant the hostile file for `case` in the sandbox; the command's arguments."""
    target = {"zero": Path("/dev/zero"), "fifo": folder / "pipe", "dir": folder / "dir"}[kind]
    if kind == "fifo":
        os.mkfifo(target)
    name = _INSIDE.get(case, "hostile.json")
    shutil.copy(folder / "m.meta.json", folder / "hostile.meta.json")  # eval reads on
    link = folder / name
    link.unlink(missing_ok=True)
    link.symlink_to(target)
    return [a.replace("{}", name) for a in READ_CASES[case]]


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(READ_CASES))
@pytest.mark.parametrize("kind", ["fifo", "dir"])
def test_reads_refuse_what_is_not_a_regular_file(
    world: dict[str, Any], tmp_path: Path, case: str, kind: str
) -> None:
    """A FIFO (which blocks a reader until a writer comes) or a folder, reached through a
    symlink: refused at once (a hang ends the test with an alarm), exit 2, nothing written."""
    folder = _sandbox(world, tmp_path)
    args = _hostile_file(folder, case, kind)

    def alarm(*_: Any) -> None:
        raise TimeoutError(f"{case}: blocked reading a {kind}")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(30)
    try:
        out = invoke(args, folder)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    check(out, (case, kind))
    # eval and validate report an unusable input as a problem of the submission or folder
    assert out.code in (1, 2) if case.startswith(("eval", "validate")) else out.code == 2, (
        out.output[-2000:]
    )
    assert any(w in out.output for w in ("regular file", "folder", "directory")), out.output[-2000:]
    assert not any((folder / "out").iterdir())


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(READ_CASES))
def test_reads_of_dev_zero_stay_within_memory(
    world: dict[str, Any], tmp_path: Path, case: str
) -> None:
    """/dev/zero (through a symlink) as every file a command reads: refused, in a subprocess
    capped at 2 GB (a reader that took it whole would die of MemoryError)."""
    folder = _sandbox(world, tmp_path)
    args = _hostile_file(folder, case, "zero")
    out = run_limited(args, folder, memory_mb=2048, timeout=60)
    check(out, case)
    assert out.code in (1, 2) and "regular file" in out.output, out.output[-2000:]


# --------------------------- class 8 (issue 26): LASER parameters refused before any work

_BAD_BY_KIND = {
    "int": ["abc", "1.5", "true", "NaN", "Infinity", "1e999", "[]", "-1", str(10**12)],
    "float": ["abc", "true", "NaN", "Infinity", "-Infinity", "1e999", "[]", "-1"],
    "choice": ["abc", "1", "null", "[]"],
    "bool": ["abc", "1", "0", "null", "[]", '"true"'],
    "text": ["1", "[]", '""', "true", '"a\\u0000b"'],
}


def _laser_cases() -> list[tuple[str, str]]:
    from gharuntime.baselines.laser.params import SPECS

    cases = []
    for key, spec in sorted(SPECS.items()):
        for value in _BAD_BY_KIND[spec.kind]:
            if spec.kind == "int" and value == "-1" and (spec.low or 0) < 0:
                continue
            if spec.kind == "text" and value == "null" and spec.optional:
                continue
            cases.append((key, value))
    return cases


@pytest.mark.parametrize(("key", "value"), _laser_cases())
def test_laser_parameters_are_refused_before_any_work(
    world: dict[str, Any], tmp_path: Path, key: str, value: str
) -> None:
    _sandbox(world, tmp_path)
    args = [*BASE["baseline"], "--param", f"{key}={value}"]
    args[1] = "laser"
    out = invoke(args, tmp_path)
    check(out, (key, value))
    assert out.code == 2 and f"laser: bad --param: {key} " in out.output, out.output[-2000:]
    assert not any((tmp_path / "out").iterdir())


def test_laser_defaults_pass_the_checks() -> None:
    from gharuntime.baselines.laser.method import Laser

    assert Laser("config").params["samples"] == 16
    assert Laser("config", lr=1e-3, lora_alpha=16, stop_after=3, checkpoint_dir="c").params


@pytest.mark.parametrize("where", ["ds/ckpt", "ds", ".", "out/x.model/ckpt"])
def test_checkpoints_never_land_in_an_input_or_the_model(
    world: dict[str, Any], tmp_path: Path, where: str
) -> None:
    _sandbox(world, tmp_path)
    before = tree_digest(tmp_path / "ds")
    args = [*BASE["baseline"], "--param", f"checkpoint_dir={where}", "--param", "max_steps=1"]
    args[1] = "laser"
    out = invoke(args, tmp_path)
    check(out, where)
    assert out.code == 2 and "checkpoint_dir" in out.output, out.output[-2000:]
    assert tree_digest(tmp_path / "ds") == before and not any((tmp_path / "out").iterdir())


# ------------------------------- class 7 (issue 26): api-json values and YAML job ids

API_SAMPLE = (
    Path(__file__).resolve().parents[1]
    / "data/real-apache/results/elek+ozone-build-results/2022/05/09/14915"
)
# (record, field, JSON text of the value): each makes its record malformed, never the build.
BAD_API_VALUES = [
    *[
        ("job", f, v)
        for f in ("id", "run_id")
        for v in ("1e999", str(10**30), "true", '"abc"', "[]", "-1", "1.5")
    ],
    *[
        ("job", f, v)
        for f in ("started_at", "completed_at", "created_at")
        for v in ("true", "1e999", str(10**30), "{}", '"not a time"', '"' + "9" * 100 + '"')
    ],
    ("job", "name", "123"),
    ("job", "name", "null"),
    ("job", "name", '"' + "x" * 50_000 + '"'),
    ("job", "status", "{}"),
    ("job", "conclusion", "5"),
    ("job", "head_sha", "[]"),
    ("job", "run_attempt", "true"),
    ("job", "run_attempt", str(2**40)),
    ("run", "id", "true"),
    ("run", "id", "1e999"),
    ("run", "created_at", "true"),
    ("run", "run_number", "1e999"),
    ("run", "workflow_id", str(10**30)),
    ("run", "path", "5"),
    ("run", "event", "[1]"),
]


def _api_folder(folder: Path, record: str, field: str, value: str) -> int:
    """The sample run with one job (or the run) carrying `value` as `field`; its job count."""
    from gharuntime.sources.api_json import read_api_json  # noqa: F401 (the reader under test)

    folder.mkdir(parents=True)
    jobs = json.loads((API_SAMPLE / "job.json").read_text())
    run = json.loads((API_SAMPLE / "run.json").read_text())
    marker = "__HOSTILE__"
    if record == "job":
        jobs["jobs"][0][field] = marker
    else:
        run[field] = marker
    (folder / "job.json").write_text(json.dumps(jobs).replace(f'"{marker}"', value))
    (folder / "run.json").write_text(json.dumps(run).replace(f'"{marker}"', value))
    return len(jobs["jobs"])


@pytest.mark.parametrize(
    ("record", "field", "value"),
    BAD_API_VALUES,
    ids=[f"{r}.{f}={v[:12]}" for r, f, v in BAD_API_VALUES],
)
def test_api_json_values_make_a_record_malformed_not_the_build(
    tmp_path: Path, record: str, field: str, value: str
) -> None:
    from gharuntime.sources.api_json import ApiSource, read_api_json

    n_jobs = _api_folder(tmp_path / "src", record, field, value)
    tables = read_api_json([ApiSource(tmp_path / "src")])
    counts = tables.problems.counts
    assert counts.get(f"malformed_{record}_record") == 1, counts
    assert tables.jobs.height == n_jobs - (record == "job")
    assert tables.runs.height == (record != "run")
    if record == "job" and field in ("started_at", "completed_at", "created_at"):
        assert tables.jobs["started_at"].min() > 10**15  # no 1970 from a bool
    out = invoke(["build", "--source", "api-json", "src", "--out", "ds"], tmp_path)
    check(out, (record, field, value))


def test_api_json_nested_deeply_is_an_unreadable_file(tmp_path: Path) -> None:
    from gharuntime.sources.api_json import ApiSource, read_api_json

    _api_folder(tmp_path / "src", "job", "name", '"build"')
    (tmp_path / "src" / "deep.json").write_text(deep(200_000))
    tables = read_api_json([ApiSource(tmp_path / "src")])
    assert tables.problems.counts.get("unreadable_file") == 1 and tables.jobs.height > 0


@pytest.mark.parametrize("job_id", ["1", "true", "null", "1.5", "~", "0x1f", "-3"])
def test_job_ids_yaml_reads_as_other_types_predict(
    world: dict[str, Any], tmp_path: Path, job_id: str
) -> None:
    (tmp_path / "wf.yml").write_text(
        f"on: push\njobs:\n  {job_id}:\n    runs-on: ubuntu-latest\n    steps: [{{run: x}}]\n"
        "  other:\n    needs: [" + job_id + "]\n    runs-on: ubuntu-latest\n"
        "    steps: [{run: y}]\n"
    )
    wf = parse_workflow((tmp_path / "wf.yml").read_text(), "wf.yml")
    assert list(wf.jobs) == [job_id, "other"]
    out = invoke(["predict", "wf.yml", "--model", str(world["model"]), "--json"], tmp_path)
    check(out, job_id)
    assert out.code == 0, out.output[-2000:]
