"""Hostile input, class 6 of issue 37: wrong results, silently. Each sweep feeds a family of
inputs that today's code turned into a plausible result with exit 0, and holds every case to
the harness's promises (tests/fuzz_support.check) plus its own: refused with exit 2 naming
what and where, or a result that is still right (strict JSON, no invented values)."""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from fuzz_support import check, invoke

from gharuntime.dataset import write_dataset
from gharuntime.fixture import fixture_jobs
from gharuntime.jsonout import finite, strict_dumps

# ------------------------------------------------ --yaml-git at what is not a repository


def _not_repositories(root: Path) -> dict[str, Path]:
    """Folders that are not a git repository with a commit, each its own way."""
    out: dict[str, Path] = {}
    root.mkdir()
    out["empty"] = root / "empty"
    out["empty"].mkdir()
    out["plain-yaml"] = root / "plain"
    (out["plain-yaml"] / ".github" / "workflows").mkdir(parents=True)
    (out["plain-yaml"] / ".github" / "workflows" / "ci.yml").write_text("on: push\njobs: {}\n")
    out["no-commit"] = root / "unborn"
    out["no-commit"].mkdir()
    subprocess.run(["git", "init", "-q", str(out["no-commit"])], check=True)
    out["dot-git-file"] = root / "gitfile"
    out["dot-git-file"].mkdir()
    (out["dot-git-file"] / ".git").write_text("gitdir: /nonexistent/x\n")
    out["broken-git"] = root / "broken"
    (out["broken-git"] / ".git" / "objects").mkdir(parents=True)
    (out["broken-git"] / ".git" / "refs").mkdir()
    (out["broken-git"] / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return out


API_SAMPLE = (
    Path(__file__).resolve().parents[1]
    / "data/real-apache/results/elek+ozone-build-results/2022/05/09/14915"
)


def test_yaml_git_that_is_not_a_repository_is_refused(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for name in ("job.json", "run.json"):
        (src / name).write_bytes((API_SAMPLE / name).read_bytes())
    for kind, folder in _not_repositories(tmp_path / "not").items():
        out = invoke(
            ["build", "--source", "api-json", "src", "--yaml-git", str(folder), "--out", kind],
            tmp_path,
        )
        check(out, kind)
        assert out.code == 2, (kind, out.output[-2000:])
        assert "--yaml-git" in out.output and str(folder) in out.output, (kind, out.output)
        assert "fix:" in out.output, (kind, out.output)
        assert not (tmp_path / kind).exists(), kind


# ------------------------------------------------------------ strict JSON on every output

NON_FINITE = [math.nan, math.inf, -math.inf, np.float64("nan"), np.float32("inf")]


@pytest.mark.parametrize("bad", NON_FINITE, ids=repr)
def test_strict_dumps_writes_null_never_nan(bad: float) -> None:
    value = {"a": bad, "b": [1.5, bad, {"c": (bad, 2)}], "d": "NaN", "e": np.int64(3)}
    text = strict_dumps(value)
    assert json.loads(text, parse_constant=_refuse) == {
        "a": None,
        "b": [1.5, None, {"c": [None, 2]}],
        "d": "NaN",
        "e": 3,
    }
    assert finite(bad) is None


def _refuse(name: str) -> None:
    raise AssertionError(f"{name} in JSON output")


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
@pytest.mark.parametrize("share", [0.0, 0.3, 1.0])
def test_diff_json_is_strict_with_non_finite_targets(
    tmp_path: Path, bad: float, share: float
) -> None:
    """A release whose targets hold NaN or ±Infinity (some or all of them) diffs to strict
    JSON, the statistics over the finite values only."""
    old = fixture_jobs(repos=4)
    new = old.with_columns(
        pl.when(pl.int_range(pl.len()) < int(share * old.height))
        .then(pl.lit(bad))
        .otherwise(pl.col("duration_s").cast(pl.Float64))
        .alias("duration_s")
    )
    write_dataset(old, tmp_path / "a", provenance={"kind": "fixture"})
    write_dataset(new, tmp_path / "b", provenance={"kind": "fixture"})
    out = invoke(["diff", "a", "b", "--json"], tmp_path)
    check(out, (bad, share))
    assert out.code == 0, out.output[-2000:]
    doc = json.loads(out.output[: out.output.rindex("\n}") + 2], parse_constant=_refuse)
    row = next(t for t in doc["targets"] if t["target"] == "duration_s")
    finite_values = np.sort(new["duration_s"].cast(pl.Float64).to_numpy())
    finite_values = finite_values[np.isfinite(finite_values)]
    if finite_values.size == 0:
        assert row["new"]["median"] is None and row["drift_ks"] is None
    else:
        assert row["new"]["median"] == pytest.approx(float(np.median(finite_values)))
        assert row["new"]["n"] == finite_values.size


def test_every_json_a_command_prints_or_a_dataset_holds_is_strict() -> None:
    """Each json.dump(s) call in the commands and the dataset writers refuses NaN (allow_nan=
    False, as strict_dumps passes): a sweep over the source, so a new output cannot miss it."""
    import ast

    import gharuntime

    root = Path(gharuntime.__file__).resolve().parent
    files = [*sorted((root / "cli").glob("*.py")), root / "dataset.py", root / "croissant.py"]
    loose = []
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if not (isinstance(node.func.value, ast.Name) and node.func.value.id == "json"):
                continue
            if node.func.attr not in ("dump", "dumps"):
                continue
            strict = any(
                k.arg == "allow_nan"
                and isinstance(k.value, ast.Constant)
                and k.value.value is False
                for k in node.keywords
            )
            # a dump inside an error message or read back at once never reaches output
            if not strict and not _inside_message_or_reread(path, node):
                loose.append(f"{path.name}:{node.lineno}")
    assert not loose, loose


def _inside_message_or_reread(path: Path, node: object) -> bool:
    line = path.read_text(encoding="utf-8").splitlines()[getattr(node, "lineno", 1) - 1]
    return "json.loads(json.dumps(" in line or line.lstrip().startswith('f"')


# ------------------------------------------- Hub ids that would leave the cache folder

BAD_HUB_IDS = [
    "org/name@../../x",
    "org/name@..",
    "org/name@a/../../b",
    "org/name@.hidden",
    "org/name@main/",
    "org/name@a//b",
    "org/name@v1.lock",
    "org/..",
    "../name",
    "org/.x",
    "org/a..b",
    "org/a--b",
    "org/name.git",
    "org/" + "n" * 200,
]


@pytest.mark.parametrize("spec", BAD_HUB_IDS)
def test_hub_ids_outside_the_cache_are_refused(tmp_path: Path, spec: str) -> None:
    """validate and download refuse an id or revision that names no Hub repository (offline:
    nothing downloads), exit 2 with the rule; `../../x` served a folder as a dataset."""
    from gharuntime.hub.spec import HubError, parse_spec

    with pytest.raises(HubError):
        parse_spec(spec)
    (tmp_path / "x").mkdir()
    env = {"HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    for args in (["validate", spec], ["download", spec, "--out", "dl"]):
        out = invoke(args, tmp_path, env=env)
        check(out, (args, spec))
        assert out.code == 2 and "valid" not in out.output.split("\n")[-2:], out.output[-2000:]
        assert not (tmp_path / "dl").exists()


@pytest.mark.parametrize("spec", ["org/name", "org/name@v1.0", "org/name@refs/pr/1", "a.b/c_d@x"])
def test_good_hub_ids_still_parse(spec: str) -> None:
    from gharuntime.hub.spec import parse_spec

    assert str(parse_spec(spec)) == spec
