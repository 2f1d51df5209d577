"""croissant.json: written by every build, valid under MLCommons' own mlcroissant, read back by
its reader as the same rows gharuntime.load gives, and checked by `validate` against the data."""

from __future__ import annotations

import hashlib
import json
import logging
import math
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import gharuntime
from gharuntime.contract import COLUMNS, CONFIGS, SPLITS, Role
from gharuntime.dataset import read_manifest, validate, write_dataset
from gharuntime.fixture import fixture_jobs

mlc = pytest.importorskip("mlcroissant")

# mlcroissant's own calls that its dependencies deprecate: rdflib's graph class (JSON-LD
# parsing) and pandas' reset_index(inplace=True) (reading Parquet)
pytestmark = [
    pytest.mark.filterwarnings("ignore:ConjunctiveGraph is deprecated:DeprecationWarning"),
    pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame.reset_index"),
]

# Independent of gharuntime.croissant: what a polars type must be called in Croissant.
EXPECTED_TYPES = {
    "String": ("sc:Text", False),
    "Int64": ("cr:Int64", False),
    "Int32": ("cr:Int32", False),
    "Float64": ("cr:Float64", False),
    "Boolean": ("sc:Boolean", False),
    "Datetime(time_unit='us', time_zone='UTC')": ("sc:DateTime", False),
    "List(String)": ("sc:Text", True),
    "List(Float64)": ("cr:Float64", True),
}


def _jobs_with_nulls() -> pl.DataFrame:
    """The fixture table with a third of the nullable columns null, so the reader meets nulls of
    every type."""
    jobs = fixture_jobs(repos=8)
    every_third = pl.Series([i % 3 == 0 for i in range(jobs.height)])
    nullable = ["log_bytes", "repo_stars", "repo_fork", "repo_created_at", "repo_topics"]
    nullable += ["repo_language", "run_number", "workflow_id", "job_id"]
    return jobs.with_columns(
        pl.when(every_third).then(None).otherwise(pl.col(c)).alias(c) for c in nullable
    )


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A dataset whose splits span several Parquet files, with nulls in every nullable type."""
    out = tmp_path_factory.mktemp("croissant") / "ds"
    write_dataset(_jobs_with_nulls(), out, provenance={"kind": "fixture"}, rows_per_file=40)
    return out


def _doc(root: Path) -> dict[str, Any]:
    return json.loads((root / "croissant.json").read_text(encoding="utf-8"))


def _plain(value: Any) -> Any:
    """A value as mlcroissant yields it, made comparable with polars' to_dicts()."""
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, (list, np.ndarray)):
        return [_plain(v) for v in value]
    if hasattr(value, "to_pydatetime"):
        return value.to_pydatetime()
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    return value


def test_mlcroissant_validates_it_without_errors(
    sharded: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        dataset = mlc.Dataset(sharded / "croissant.json")
    issues = dataset.metadata.ctx.issues
    assert not issues.errors
    # a build is deterministic, so it has no publication date; nothing else is missing
    assert all("datePublished" in w for w in issues.warnings), issues.warnings
    # the standard 1.1 context, as mlcroissant itself writes it (a reader warns about others)
    from mlcroissant._src.core.context import Context, CroissantVersion
    from mlcroissant._src.core.rdf import make_context

    ctx = Context()
    ctx.conforms_to = CroissantVersion.V_1_1
    assert _doc(sharded)["@context"] == make_context(ctx)
    assert _doc(sharded)["conformsTo"] == "http://mlcommons.org/croissant/1.1"
    assert "not standard" not in caplog.text


def test_the_reader_yields_the_rows_gharuntime_load_gives(sharded: Path) -> None:
    dataset = mlc.Dataset(sharded / "croissant.json")
    manifest = read_manifest(sharded)
    assert max(f["rows"] for f in manifest["files"]) == 40  # several files per split
    names = [c.name for c in COLUMNS]
    compared = 0
    for config in CONFIGS:
        for split in SPLITS:
            rid = f"{config}/{split}"
            got = [
                {k.removeprefix(f"{rid}/"): _plain(v) for k, v in r.items()}
                for r in dataset.records(rid)
            ]
            want = gharuntime.load(sharded, config, split).to_dicts()
            assert len(got) == len(want)
            compared += len(got)
            assert all(list(r) == names for r in got)
            key = {r["id"]: r for r in want}
            assert sorted(r["id"] for r in got) == sorted(key)
            for row in got:
                assert row == key[row["id"]], row["id"]
    assert compared == 2 * manifest["rows"]  # every row of both configs
    # the nulls made it through as nulls, not as 0, "None" or NaN
    train = [_plain(r["temporal/train/log_bytes"]) for r in dataset.records("temporal/train")]
    assert None in train and all(v is None or isinstance(v, int) for v in train)


def test_distribution_lists_every_parquet_file_with_its_sha256(sharded: Path) -> None:
    doc = _doc(sharded)
    objects = {d["contentUrl"]: d for d in doc["distribution"] if d["@type"] == "cr:FileObject"}
    on_disk = sorted(p.relative_to(sharded).as_posix() for p in sharded.rglob("*.parquet"))
    assert sorted(objects) == on_disk
    for rel, entry in objects.items():
        assert entry["sha256"] == hashlib.sha256((sharded / rel).read_bytes()).hexdigest()
        assert entry["encodingFormat"] == "application/x-parquet"
    sets = {d["@id"]: d for d in doc["distribution"] if d["@type"] == "cr:FileSet"}
    assert set(sets) == {f"{c}/{s}/files" for c in CONFIGS for s in SPLITS}


def test_one_record_set_per_config_and_split_with_every_contract_field(sharded: Path) -> None:
    doc = _doc(sharded)
    manifest = read_manifest(sharded)
    record_sets = {r["@id"]: r for r in doc["recordSet"]}
    assert set(record_sets) == {f"{c}/{s}" for c in CONFIGS for s in SPLITS}
    for rid, record_set in record_sets.items():
        config, split = rid.split("/")
        assert f"{manifest['splits'][config][split]:,} jobs" in record_set["description"]
        assert record_set["key"] == {"@id": f"{rid}/id"}
        fields = {f["name"]: f for f in record_set["field"]}
        assert list(fields) == [c.name for c in COLUMNS]
        for column in COLUMNS:
            field = fields[column.name]
            data_type, is_array = EXPECTED_TYPES[str(column.dtype)]
            assert field["dataType"] == data_type
            assert bool(field.get("isArray")) is is_array
            assert column.meaning in field["description"]
            assert f"Role: {column.role.value}" in field["description"]
            assert field["source"] == {
                "fileSet": {"@id": f"{rid}/files"},
                "extract": {"column": column.name},
            }
    targets = [
        f for f in record_sets["temporal/test"]["field"] if "Role: target" in f["description"]
    ]
    assert [f["name"] for f in targets] == [c.name for c in COLUMNS if c.role is Role.TARGET]


def test_licence_source_synthetic_and_citation(tmp_path: Path) -> None:
    real = tmp_path / "real"
    write_dataset(fixture_jobs(repos=4), real, provenance={"kind": "ghalogs", "synthetic": False})
    synthetic = tmp_path / "synthetic"
    write_dataset(
        fixture_jobs(repos=4), synthetic, provenance={"kind": "simulated", "synthetic": True}
    )
    a, b = _doc(real), _doc(synthetic)
    assert "synthetic" not in a["keywords"] and "Synthetic" not in a["description"]
    assert a["rai:dataCollectionType"] != "Simulation"
    assert "GHALogs" in a["rai:dataCollection"] and "GHALogs" in a["isBasedOn"]
    assert "synthetic" in b["keywords"] and b["description"].startswith("Synthetic.")
    assert b["rai:dataCollectionType"] == "Simulation" and "synthetic" in b["name"].lower()
    assert b["license"] == "apache-2.0"
    manifest = read_manifest(synthetic)
    for doc in (a, b):
        assert doc["citeAs"].startswith("@misc{gharuntime,")
        assert doc["version"] == manifest["schema_version"]
        assert doc["isLiveDataset"] is False
    assert b["identifier"] == f"gharuntime-revision:{manifest['revision']}"
    assert b["temporalCoverage"].count("/") == 1
    # the card links the file and the manifest names it
    assert "](croissant.json)" in (synthetic / "README.md").read_text(encoding="utf-8")
    assert manifest["croissant"] == "croissant.json"


def test_an_empty_split_reads_as_no_rows(tmp_path: Path) -> None:
    jobs = fixture_jobs(repos=4)
    out = tmp_path / "ds"
    ids = jobs["repo_id"].unique().to_list()
    write_dataset(jobs, out, provenance={"kind": "fixture"}, cross_repo={i: "train" for i in ids})
    dataset = mlc.Dataset(out / "croissant.json")
    assert len(list(dataset.records("cross_repo/train"))) == jobs.height
    assert list(dataset.records("cross_repo/test")) == []


def _problems(root: Path) -> list[str]:
    return [str(p) for p in validate(root) if p.where == "croissant.json"]


def test_validate_reports_a_croissant_file_that_no_longer_matches_the_data(
    fixture_dataset: Path, tmp_path: Path
) -> None:
    assert validate(fixture_dataset) == []
    stale = (fixture_dataset / "croissant.json").read_text(encoding="utf-8")
    # the data rebuilt (other rows), the old croissant.json put back beside it
    write_dataset(fixture_jobs(seed=1), fixture_dataset, provenance={"kind": "fixture"})
    (fixture_dataset / "croissant.json").write_text(stale, encoding="utf-8")
    problems = _problems(fixture_dataset)
    stale_files = [p for p in problems if "croissant.json describes other data" in p]
    assert len(stale_files) == len(read_manifest(fixture_dataset)["files"])
    # what else the old file says of the old rows (its description's counts, file sizes)
    assert all("rebuild the dataset" in p for p in problems)
    assert [p for p in validate(fixture_dataset) if p.where != "croissant.json"] == []


def test_validate_reports_edited_types_fields_and_files(fixture_dataset: Path) -> None:
    path = fixture_dataset / "croissant.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    record_set = doc["recordSet"][0]
    record_set["field"][0]["dataType"] = "sc:Integer"  # id is text
    record_set["field"].pop()  # log_bytes gone
    doc["distribution"] = [d for d in doc["distribution"] if "temporal/test-" not in d["@id"]]
    doc["distribution"].append(
        {"@type": "cr:FileObject", "@id": "data/extra.parquet", "contentUrl": "data/extra.parquet"}
    )
    path.write_text(json.dumps(doc), encoding="utf-8")
    problems = "\n".join(_problems(fixture_dataset))
    assert 'field temporal/train/id: dataType "sc:Integer"' in problems
    assert "record set temporal/train lacks field temporal/train/log_bytes" in problems
    assert "distribution lacks data/temporal/test-00000-of-00001.parquet" in problems
    assert "distribution lists 'data/extra.parquet'" in problems


@pytest.mark.parametrize("content", ["{not json", "[]", '{"a": ' * 100_000])
def test_validate_reports_an_unreadable_croissant_file(fixture_dataset: Path, content: str) -> None:
    (fixture_dataset / "croissant.json").write_text(content, encoding="utf-8")
    problems = _problems(fixture_dataset)
    assert len(problems) == 1 and "rebuild the dataset" in problems[0]


def test_validate_reports_a_missing_croissant_file_the_manifest_names(
    fixture_dataset: Path, tmp_path: Path
) -> None:
    (fixture_dataset / "croissant.json").unlink()
    assert _problems(fixture_dataset) == [
        "croissant.json: missing, though manifest.json lists it; rebuild the dataset"
    ]
    # a folder from before croissant.json (its manifest does not name one) stays valid
    older = tmp_path / "older"
    shutil.copytree(fixture_dataset, older)
    manifest = json.loads((older / "manifest.json").read_text(encoding="utf-8"))
    del manifest["croissant"]
    (older / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert validate(older) == []


def test_an_api_json_build_lists_its_provenance_file_too(tmp_path: Path) -> None:
    from gharuntime.builder.build import build
    from gharuntime.source_kinds.api_json import PROVENANCE_FILE, ApiJsonSource

    sample = Path(__file__).resolve().parent / "data" / "real-apache"
    out = tmp_path / "ds"
    build(
        ApiJsonSource(
            [sample / "results" / "adoroszlai+ratis-build-results"],
            yaml_git=[sample / "yaml" / "ratis.git"],
        ),
        out,
    )
    doc = _doc(out)
    objects = {d["@id"]: d for d in doc["distribution"] if d["@type"] == "cr:FileObject"}
    on_disk = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.parquet"))
    assert PROVENANCE_FILE in on_disk and sorted(objects) == on_disk
    for rel, entry in objects.items():
        assert entry["sha256"] == hashlib.sha256((out / rel).read_bytes()).hexdigest()
    assert doc["rai:dataCollectionType"] == "Secondary Data analysis"
    assert "synthetic" not in doc["keywords"]
    assert not mlc.Dataset(out / "croissant.json").metadata.ctx.issues.errors
    assert validate(out) == []
    (out / PROVENANCE_FILE).write_bytes(b"changed")
    assert any(PROVENANCE_FILE in p and "describes other data" in p for p in _problems(out))


def _edited(fixture_dataset: Path, edit: str) -> None:
    path = fixture_dataset / "croissant.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    if edit == "licence":
        doc["license"] = "https://example.com/all-rights-reserved"
    elif edit == "duplicate @id":
        doc["distribution"].append(dict(doc["distribution"][0], name="again"))
    elif edit == "NaN":
        doc["recordSet"][0]["field"][0]["description"] = float("nan")
    elif edit == "extra key":
        doc["sameAs"] = "https://evil.example"
    elif edit == "file renamed":
        doc["distribution"][0]["name"] = "<script>x</script>"
    elif edit == "temporalCoverage":
        doc["temporalCoverage"] = "yesterday"
    path.write_text(json.dumps(doc), encoding="utf-8")  # json.dumps writes NaN as NaN


@pytest.mark.parametrize(
    ("edit", "says"),
    [
        ("licence", "license"),
        ("duplicate @id", "names two nodes"),
        ("NaN", "NaN"),
        ("extra key", "'sameAs' is not a key the manifest gives"),
        ("file renamed", ": name"),
        ("temporalCoverage", "is not FIRST/LAST"),
    ],
)
def test_validate_refuses_every_edit_of_croissant_json(
    fixture_dataset: Path, edit: str, says: str
) -> None:
    """croissant.json is written from the manifest and the rows: any other content (a licence
    changed after the build, an @id that names two nodes, a NaN, which JSON does not have) is a
    problem, as mlcroissant would warn or refuse."""
    _edited(fixture_dataset, edit)
    problems = "\n".join(_problems(fixture_dataset))
    assert says in problems, problems


def test_an_oversized_croissant_json_is_not_read_whole(
    fixture_dataset: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gharuntime.croissant as croissant

    monkeypatch.setattr(croissant, "MAX_CROISSANT_BYTES", 1000)
    problems = "\n".join(_problems(fixture_dataset))
    assert "croissant.json: not readable:" in problems and "at most" in problems, problems
