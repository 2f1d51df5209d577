"""Transfer tables: results of methods trained on one dataset (`trained_on`) and scored on
another, filed, checked, ranked and labelled apart from the plain tables; and the committed real
results (gharuntime-real-apache) with their transfer table from the simulated world."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from gharuntime.cli.main import cli
from gharuntime.leaderboard import add_result, load_result, scan

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = ROOT / "leaderboard" / "results"
REAL = "gharuntime-real-apache"
SIM = "gharuntime-sim-a"
REV_A = "a" * 64
REV_B = "b" * 64


def _run(*args: str) -> Any:
    return CliRunner().invoke(cli, ["leaderboard", *args])


def _files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*.json")}


def _trained_on(name: str = SIM, revision: str = REV_A, **over: Any) -> dict[str, Any]:
    block = {
        "id": f"datasets/{name}",  # a folder: filed under its name
        "kind": "local",
        "revision": revision,
        "config": "temporal",
        "split": "train",
        "rows": 8139,
        "repositories": 144,
        "source_kind": "simulated",
        "synthetic": True,
    }
    return {**block, **over}


def transfer_result(
    scored: Path, out: Path, *, synthetic: bool | None = None, **trained_on: Any
) -> Path:
    """`scored` (a real `gharuntime eval` result) as a transfer result: trained on `trained_on`.
    `synthetic` overrides what the scored dataset says of itself."""
    doc = json.loads(scored.read_text(encoding="utf-8"))
    doc["trained_on"] = _trained_on(**trained_on)
    if synthetic is not None:
        doc["dataset"]["synthetic"] = synthetic
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return out


@pytest.fixture()
def transfer_dir(scored_results: dict[str, Path], results_dir: Path, tmp_path: Path) -> Path:
    """The plain fixture tables plus a transfer table (temporal/config, trained on SIM), filed
    by `add`, with the scored dataset marked real."""
    for method in ("exact-ish", "double", "alternating"):
        src = transfer_result(
            scored_results[method], tmp_path / "made" / f"{method}.json", synthetic=False
        )
        add_result(src, results_dir)
    return results_dir


# --- filing and checking ----------------------------------------------------------------------


def test_transfer_results_validate_and_are_filed_as_their_own_table(transfer_dir: Path) -> None:
    folder = transfer_dir / "gharuntime-fixture"
    transfer = sorted(p.name for p in folder.glob("transfer-*.json"))
    assert transfer == [
        f"transfer-{SIM}-temporal-config-{m}.json" for m in ("alternating", "double", "exact-ish")
    ]
    entry = load_result(folder / transfer[0])
    assert entry.trained_on == SIM and entry.canonical.name == transfer[0]
    tables = {(t.config, t.track, t.trained_on): t for t in scan(transfer_dir)}
    assert sorted(tables) == [
        ("temporal", "config", ""),
        ("temporal", "config", SIM),
        ("temporal", "history", ""),
    ]
    assert sorted(e.method for e in tables[("temporal", "config", SIM)].entries) == [
        "alternating",
        "double",
        "exact-ish",
    ]
    # the plain table keeps its four methods: nothing of the transfer table leaks into it
    assert len(tables[("temporal", "config", "")].entries) == 4


def test_add_refuses_a_second_training_revision_in_a_transfer_table(
    scored_results: dict[str, Path], transfer_dir: Path, tmp_path: Path
) -> None:
    before = _files(transfer_dir)
    other = transfer_result(scored_results["opposite"], tmp_path / "rev-b.json", revision=REV_B)
    r = _run("add", str(other), "--results", str(transfer_dir))
    assert r.exit_code == 2, r.output
    assert str(other) in r.output and "training dataset" in r.output
    assert "revision bbbbbbbbbbbb" in r.output and "revision aaaaaaaaaaaa" in r.output
    assert "nothing written" in r.output
    assert _files(transfer_dir) == before


def test_add_refuses_another_training_split_in_a_transfer_table(
    scored_results: dict[str, Path], transfer_dir: Path, tmp_path: Path
) -> None:
    before = _files(transfer_dir)
    other = transfer_result(scored_results["opposite"], tmp_path / "val.json", split="validation")
    r = _run("add", str(other), "--results", str(transfer_dir))
    assert r.exit_code == 2 and "temporal/validation split" in r.output
    assert _files(transfer_dir) == before


def test_leaderboard_refuses_a_table_mixing_two_training_datasets_and_writes_nothing(
    scored_results: dict[str, Path], transfer_dir: Path, tmp_path: Path
) -> None:
    # filed by hand under its canonical name, past `add`: a result trained on another revision
    # of the training dataset, in the table trained on revision A
    folder = transfer_dir / "gharuntime-fixture"
    sneaked = transfer_result(
        scored_results["opposite"],
        folder / f"transfer-{SIM}-temporal-config-opposite.json",
        revision=REV_B,
    )
    out = tmp_path / "board"
    out.mkdir()
    (out / "README.md").write_text("old")
    r = _run("--results", str(transfer_dir), "--out", str(out))
    assert r.exit_code == 2, r.output
    assert str(sneaked) in r.output and "training dataset" in r.output
    assert f"trained on {SIM}" in r.output  # the table is named with its training dataset
    assert sorted(p.name for p in out.iterdir()) == ["README.md"]
    assert (out / "README.md").read_text() == "old"


def test_a_file_named_for_one_training_dataset_holding_another_is_refused(
    scored_results: dict[str, Path], transfer_dir: Path, tmp_path: Path
) -> None:
    folder = transfer_dir / "gharuntime-fixture"
    misfiled = transfer_result(
        scored_results["opposite"],
        folder / f"transfer-{SIM}-temporal-config-opposite.json",
        name="gharuntime-sim-b",
    )
    r = _run("--results", str(transfer_dir), "--out", str(tmp_path / "board"))
    assert r.exit_code == 2
    assert f"{misfiled}: holds 'opposite' on gharuntime-fixture/temporal/config trained on " in (
        r.output
    )
    assert "transfer-gharuntime-sim-b-temporal-config-opposite.json" in r.output
    assert not (tmp_path / "board").exists()


def test_trained_on_must_be_another_dataset_and_complete(
    scored_results: dict[str, Path], results_dir: Path, tmp_path: Path
) -> None:
    before = _files(results_dir)
    itself = transfer_result(
        scored_results["opposite"], tmp_path / "self.json", name="gharuntime-fixture"
    )
    r = _run("add", str(itself), "--results", str(results_dir))
    assert r.exit_code == 2 and str(itself) in r.output
    assert "the dataset it was scored on" in r.output
    doc = json.loads(itself.read_text())
    doc["trained_on"] = _trained_on()
    del doc["trained_on"]["revision"]
    (tmp_path / "norev.json").write_text(json.dumps(doc))
    r = _run("add", str(tmp_path / "norev.json"), "--results", str(results_dir))
    assert r.exit_code == 2 and "trained_on: 'revision' is a required property" in r.output
    assert _files(results_dir) == before


def test_add_never_overwrites_a_result_of_another_table_under_the_same_name(
    scored_results: dict[str, Path], results_dir: Path, tmp_path: Path
) -> None:
    # (training dataset "gharuntime-sim-temporal-config", method "x") and (training dataset
    # "gharuntime-sim", method "temporal-config-x") spell the same file name
    doc = json.loads(scored_results["opposite"].read_text())
    doc["meta"]["method"] = "x"
    first = tmp_path / "first.json"
    first.write_text(json.dumps(doc))
    first = transfer_result(first, first, name="gharuntime-sim-temporal-config")
    filed = add_result(first, results_dir)
    doc["meta"]["method"] = "temporal-config-x"
    second = tmp_path / "second.json"
    second.write_text(json.dumps(doc))
    second = transfer_result(second, second, name="gharuntime-sim")
    before = _files(results_dir)
    r = _run("add", str(second), "--results", str(results_dir), "--replace")
    assert r.exit_code == 2 and "holds a result of another table" in r.output
    assert str(filed) in r.output
    assert _files(results_dir) == before


# --- ranking and labelling -------------------------------------------------------------------


def test_markdown_names_the_training_dataset_and_places_transfer_tables_last(
    transfer_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "board"
    r = _run("--results", str(transfer_dir), "--out", str(out))
    assert r.exit_code == 0, r.output
    text = (out / "README.md").read_text()
    headings = re.findall(r"^## (.+)$", text, flags=re.M)
    assert headings == [
        "gharuntime-fixture · temporal / history",
        "gharuntime-fixture · temporal / config",
        f"gharuntime-fixture · temporal / config · trained on {SIM}",
    ]
    section = text.split(f"## gharuntime-fixture · temporal / config · trained on {SIM}")[1]
    assert (
        f"*Transfer: every method was trained on the simulated world {SIM} (its temporal train "
        "split, 8,139 records of 144 repositories, revision `aaaaaaaaaaaaaaaa`), scored on real "
        "jobs of gharuntime-fixture (its temporal test split).*"
    ) in section
    assert "Partly memorization" not in section  # the plain table's note is not the transfer's
    data_line = next(line for line in section.splitlines() if line.startswith("Dataset revision"))
    assert "real jobs" in data_line and "synthetic" not in data_line
    # ranked by RMSLE with paired rank groups, like any table
    # the first table (the coverage by recency follows it)
    table = section.split("\n\n| ")[1].split("\n\n")[0]
    rows = [line.split(" | ")[:2] for line in ("| " + table).splitlines()][2:]
    assert [m for _, m in rows] == ["exact-ish", "alternating", "double"]
    assert rows[0][0] == "| 1" and rows[-1][0] != "| 1"
    plain = text.split("## gharuntime-fixture · temporal / config\n")[1].split("## ")[0]
    assert "**synthetic data**" in plain  # the plain tables still say the fixture is synthetic


def test_page_has_a_trained_on_column_and_filter(transfer_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "board"
    assert _run("--results", str(transfer_dir), "--out", str(out)).exit_code == 0
    html = (out / "index.html").read_text()
    raw = re.search(
        r'<script type="application/json" id="leaderboard-data">(.*?)</script>', html, re.S
    )
    assert raw is not None
    data = json.loads(raw.group(1))
    assert "trained_on" in data["csv_columns"]
    trained = sorted(
        {(r["method"], r["trained_on"]) for r in data["rows"] if r["trained_on"] == SIM}
    )
    assert trained == [("alternating", SIM), ("double", SIM), ("exact-ish", SIM)]
    assert all(r["synthetic"] is False for r in data["rows"] if r["trained_on"] == SIM)
    assert html.count(f'data-trained="{SIM}"') == 3 + 1  # three rows and the plots' section
    assert f'<option value="{SIM}">{SIM}</option>' in html and 'id="filter-trained"' in html
    assert f"gharuntime-fixture · temporal / config · trained on {SIM}</h2>" in html
    assert f"trained on the simulated world {SIM}" in html


def test_every_transfer_row_says_what_it_was_trained_and_scored_on(
    transfer_dir: Path, tmp_path: Path
) -> None:
    """A transfer row copied out of its table still says what it is: in the Markdown's rows,
    the page's "trained on" cells and the folder's summary.md."""
    label = (
        f"trained on {SIM} temporal/train (simulated), scored on gharuntime-fixture "
        "temporal/test (real)"
    )
    out = tmp_path / "board"
    assert _run("--results", str(transfer_dir), "--out", str(out)).exit_code == 0
    text = (out / "README.md").read_text(encoding="utf-8")
    rows = [line for line in text.splitlines() if line.startswith("| ") and label in line]
    assert sorted(line.split(" | ")[1] for line in rows) == ["alternating", "double", "exact-ish"]
    assert all(f"| config · {label} |" in line for line in rows)
    plain = text.split("## gharuntime-fixture · temporal / config\n")[1].split("## ")[0]
    assert "trained on" not in plain  # a plain row needs no label
    html = (out / "index.html").read_text(encoding="utf-8")
    assert html.count(f'{SIM} <span class="ci">({label})</span>') == 3
    summary = (transfer_dir / "gharuntime-fixture" / "summary.md").read_text(encoding="utf-8")
    transfer = summary.split("## Transfer: trained on another dataset")[1]
    assert sorted(
        line.split(" | ")[2] for line in transfer.splitlines() if line.startswith(f"| {label} |")
    ) == ["alternating", "double", "exact-ish"]
    assert label not in summary.split("## Transfer")[0]


# --- the committed real results ----------------------------------------------------------------


def test_the_committed_real_results_validate_with_their_transfer_tables() -> None:
    tables = [t for t in scan(COMMITTED) if t.dataset == REAL]
    kinds = sorted((t.trained_on, t.config, t.track) for t in tables)
    assert kinds == [
        ("", "cross_repo", "config"),
        ("", "cross_repo", "history"),
        ("", "cross_repo", "multi"),
        ("", "temporal", "config"),
        ("", "temporal", "history"),
        ("", "temporal", "multi"),
        ("gharuntime-sim-small", "temporal", "config"),
        ("gharuntime-sim-small", "temporal", "history"),
    ]
    # 29 own on the duration tracks (LASER tiny on three tables, tiny-256 on two, tuned on
    # temporal) + 13 on multi (5 on cross_repo; 8 on temporal: LASER and both tuned trees too)
    # + 11 transfer
    assert sum(len(t.entries) for t in tables) == 53
    for table in tables:
        for e in table.entries:
            assert e.result["dataset"]["synthetic"] is False, e.path  # real jobs
            assert e.result["provenance"]["command"], e.path
            if table.trained_on:
                t = e.result["trained_on"]
                assert (t["synthetic"], t["source_kind"], t["split"]) == (
                    True,
                    "simulated",
                    "train",
                )
    by_key = {(t.trained_on, t.config, t.track): t for t in tables}
    plain = by_key[("", "temporal", "config")].entries[0].result["dataset"]
    moved = by_key[("gharuntime-sim-small", "temporal", "config")].entries[0].result["dataset"]
    # scored on the very records of the plain temporal table
    assert (moved["revision"], moved["record_ids_sha256"]) == (
        plain["revision"],
        plain["record_ids_sha256"],
    )


def test_the_committed_leaderboard_is_what_the_command_writes(tmp_path: Path) -> None:
    """leaderboard/README.md and index.html are regenerated from leaderboard/results:
    `gharuntime leaderboard` (its defaults, from the repository root)."""
    shutil.copytree(COMMITTED, tmp_path / "results")
    r = _run("--results", str(tmp_path / "results"), "--out", str(tmp_path))
    assert r.exit_code == 0, r.output
    for name in ("README.md", "index.html"):
        assert (tmp_path / name).read_bytes() == (ROOT / "leaderboard" / name).read_bytes(), (
            f"leaderboard/{name} is stale: run `gharuntime leaderboard` from the repository root"
        )
    text = (ROOT / "leaderboard" / "README.md").read_text()
    real = [s for s in text.split("\n## ") if s.startswith(REAL)]
    assert len(real) == 8  # config, history and multi on both configs, and the two transfer tables
    assert all("**synthetic data**" not in s and " · real jobs · " in s for s in real)
    assert sum("trained on the simulated world gharuntime-sim-small" in s for s in real) == 2
