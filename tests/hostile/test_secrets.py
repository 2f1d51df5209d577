"""Issue 37 class 1, secrets: nothing outside a dataset folder is ever read or uploaded (a
symlink leaving it is reported by `validate` and refused by `publish`, `eval`, `baseline` and
`diff`), and no credential a
location carries is ever printed, whichever command, argument, option or variable it came by
(gharuntime.redact, applied by every error and by the command line's output layer)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fuzz_support import check, invoke, tree_digest
from hostile_support import BASE, build_world, sandbox, text_options

from gharuntime.hub import HubError, publish
from gharuntime.sim.hub import HubServer, serve_hub

PASSWORD = "Pw" + "S3cr3tValue" * 2  # built at run time: never a literal the code could match

# A credential in every shape a location can carry one.
CRED_LOCATIONS = [
    f"https://someone:{PASSWORD}@127.0.0.1:9/org/ds",
    f"https://{PASSWORD}@127.0.0.1:9/org/ds",  # a token as the user
    f"http://someone:p@{PASSWORD}@127.0.0.1:9/x",  # a password holding @
    f"ftp://someone:{PASSWORD}@host/x",
    f"hf://someone:{PASSWORD}@org/ds",
    f"https://127.0.0.1:9/org/ds?token={PASSWORD}",
    f"someone:{PASSWORD}@host/org/ds",  # scp-like, no scheme
]

# Every way a dataset location reaches a command: (arguments with {} for it, environment).
DATASET_SLOTS = [
    (["validate", "{}"], {}),
    (["diff", "{}", "ds"], {}),
    (["diff", "ds", "{}"], {}),
    (["download", "{}"], {}),
    (["download", "{}", "--to", "out/d"], {}),
    (["eval", "m.jsonl", "--dataset", "{}", "--resamples", "3"], {}),
    (["eval", "--gold", "--dataset", "{}", "--resamples", "3"], {}),
    (["baseline", "median", "--dataset", "{}", "--out", "out/x.jsonl"], {}),
    (["build", "--raw", "raw", "--previous", "{}", "--out", "out/ds"], {}),
    (["eval", "m.jsonl", "--resamples", "3"], {"GHARUNTIME_DATASET": "{}"}),
    (["eval", "--gold", "--resamples", "3"], {"GHARUNTIME_DATASET": "{}"}),
]

HUB_ENV = {"HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, fixture_dataset_master: Path) -> dict[str, Any]:
    return build_world(tmp_path_factory.mktemp("secrets"), fixture_dataset_master)


def _fill(args: list[str], env: dict[str, str], value: str) -> tuple[list[str], dict[str, str]]:
    return [a.replace("{}", value) for a in args], {
        k: v.replace("{}", value) for k, v in env.items()
    }


@pytest.mark.parametrize("location", CRED_LOCATIONS, ids=range(len(CRED_LOCATIONS)))
@pytest.mark.parametrize(
    ("args", "env"), DATASET_SLOTS, ids=[" ".join(a[:3]) + str(sorted(e)) for a, e in DATASET_SLOTS]
)
def test_a_credential_in_a_dataset_location_is_never_shown(
    world: dict[str, Any], tmp_path: Path, args: list[str], env: dict[str, str], location: str
) -> None:
    sandbox(world, tmp_path)
    args, env = _fill(args, env, location)
    out = invoke(args, tmp_path, {**HUB_ENV, **env})
    check(out, args)
    assert out.code in (1, 2), out.output[-2000:]
    assert PASSWORD not in out.output, out.output[-2000:]
    assert not any((tmp_path / "out").iterdir())


@pytest.mark.slow
@pytest.mark.parametrize(
    ("base", "option"),
    [(base, option) for _, base, option in text_options()],
    ids=[f"{c} {o}" for c, _, o in text_options()],
)
def test_a_credential_in_any_text_option_is_never_shown(
    world: dict[str, Any], tmp_path: Path, base: list[str], option: str
) -> None:
    """Every text or path option of every command, given a URL with a password: whatever the
    command does with it (a path, a name, an id), the password never reaches the output."""
    sandbox(world, tmp_path)
    out = invoke([*base, option, CRED_LOCATIONS[0]], tmp_path, HUB_ENV)
    check(out, (base, option))
    assert PASSWORD not in out.output, out.output[-2000:]


# ------------------------------------------------- links leaving a dataset folder

TOKEN = "hf_" + "hostile" * 3


@pytest.fixture()
def hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[HubServer]:
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    monkeypatch.delenv("HF_TOKEN", raising=False)
    with serve_hub(tmp_path / "hub-store", tokens={TOKEN: "alice"}) as server:
        yield server


def _outside(tmp_path: Path, ds: Path) -> Path:
    secret = tmp_path / "elsewhere" / "token"
    secret.parent.mkdir()
    secret.write_text(PASSWORD)
    return secret


# (link inside the dataset folder, what it points at): each leads outside the folder
LEAVING = {
    "figure to a file": lambda ds, secret: ("figures/x.png", secret),
    "relative, climbing out": lambda ds, secret: (
        "figures/rel.png",
        Path(os.path.relpath(secret, ds / "figures")),
    ),
    "folder to a folder": lambda ds, secret: ("extra", secret.parent),
    "card replaced": lambda ds, secret: ("README.md", secret),
    "through a link inside": lambda ds, secret: ("figures/b.png", ds / "figures" / "hop"),
    "hidden-looking name": lambda ds, secret: ("figures/..x.png", secret),
    "dangling, outside": lambda ds, secret: ("figures/gone.png", secret.parent / "missing"),
}


def _plant(tmp_path: Path, ds: Path, case: str) -> str:
    secret = _outside(tmp_path, ds)
    (ds / "figures").mkdir(exist_ok=True)
    (ds / "figures" / "hop").symlink_to(secret)  # a link inside to outside, reached via another
    rel, target = LEAVING[case](ds, secret)
    link = ds / rel
    if link.exists() or link.is_symlink():
        link.unlink()
    link.symlink_to(target)
    return rel


@pytest.mark.parametrize("case", sorted(LEAVING))
def test_a_link_leaving_the_folder_fails_validate_and_publish(
    hub: HubServer, fixture_dataset: Path, tmp_path: Path, case: str
) -> None:
    rel = _plant(tmp_path, fixture_dataset, case)
    out = invoke(["validate", str(fixture_dataset)], tmp_path)
    check(out, case)
    assert out.code == 1 and rel.split("/")[0] in out.output, out.output[-2000:]
    assert PASSWORD not in out.output
    for args in (  # the commands that read a dataset refuse it, naming the link
        ["eval", "--gold", "--dataset", str(fixture_dataset), "--resamples", "3"],
        ["baseline", "median", "--dataset", str(fixture_dataset), "--out", "o/x.jsonl"],
        ["diff", str(fixture_dataset), str(fixture_dataset)],
    ):
        out = invoke(args, tmp_path)
        check(out, (case, args[0]))
        assert out.code == 2 and rel.split("/")[0] in out.output, out.output[-2000:]
        assert PASSWORD not in out.output and not (tmp_path / "o").exists()
    before = tree_digest(fixture_dataset)
    with pytest.raises(HubError):
        publish(fixture_dataset, "org/bench", endpoint=hub.url, token=TOKEN)
    assert hub.traffic.requests == []  # refused before anything was sent
    out = invoke(
        ["publish", str(fixture_dataset), "--repo-id", "org/bench", "--endpoint", hub.url],
        tmp_path,
        {"HF_TOKEN": TOKEN},
    )
    check(out, case)
    assert out.code == 2 and hub.traffic.requests == [], out.output[-2000:]
    assert tree_digest(fixture_dataset) == before
    stored = [p for p in (tmp_path / "hub-store").rglob("*") if p.is_file()]
    assert not any(PASSWORD.encode() in p.read_bytes() for p in stored)


def test_links_that_stay_inside_the_folder_are_fine(fixture_dataset: Path, tmp_path: Path) -> None:
    (fixture_dataset / "figures").mkdir(exist_ok=True)
    (fixture_dataset / "figures" / "card.md").symlink_to(Path("..") / "README.md")
    out = invoke(["validate", str(fixture_dataset)], tmp_path)
    assert out.code == 0, out.output[-2000:]


def test_the_sweep_reaches_every_dataset_command() -> None:
    assert {a[0] for a, _ in DATASET_SLOTS} >= {"validate", "diff", "download", "eval", "build"}
    assert {"baseline", "eval", "diff", "build"} <= set(BASE)


@pytest.mark.parametrize("how", ["absolute", "relative"])
def test_the_library_load_refuses_a_data_file_leaving_the_folder(
    fixture_dataset: Path, tmp_path: Path, how: str
) -> None:
    """`gharuntime.load` and `dataset.load` open split files by name, not by walking the
    folder: they refuse a data file that is a link out, as every command does."""
    import polars as pl

    import gharuntime
    from gharuntime.dataset import DatasetError, load, split_paths

    path = split_paths(fixture_dataset, "temporal", "train")[0]
    outside = tmp_path / "elsewhere" / "rows.parquet"
    outside.parent.mkdir()
    pl.DataFrame({"secret": [PASSWORD]}).write_parquet(outside)
    path.unlink()
    path.symlink_to(outside if how == "absolute" else Path(os.path.relpath(outside, path.parent)))
    for loader in (load, gharuntime.load):
        with pytest.raises(DatasetError, match="outside the dataset folder") as caught:
            loader(fixture_dataset, "temporal", "train")
        assert PASSWORD not in str(caught.value)
