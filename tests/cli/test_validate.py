from pathlib import Path

from click.testing import CliRunner

from gharuntime.cli.main import cli
from gharuntime.version import __version__


def test_version() -> None:
    result = CliRunner().invoke(cli, ["--version"])
    assert result.exit_code == 0 and __version__ in result.output


def test_validate_ok_exits_zero(fixture_dataset: Path) -> None:
    result = CliRunner().invoke(cli, ["validate", str(fixture_dataset)])
    assert result.exit_code == 0, result.output
    assert "valid" in result.output


def test_validate_problems_exit_one_and_name_the_file(fixture_dataset: Path) -> None:
    victim = next((fixture_dataset / "data" / "temporal").glob("test-*.parquet"))
    victim.unlink()
    result = CliRunner().invoke(cli, ["validate", str(fixture_dataset)])
    assert result.exit_code == 1
    assert victim.name in result.output and "missing" in result.output


def test_validate_missing_folder_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["validate", str(tmp_path / "nope")])
    assert result.exit_code == 2 and "does not exist" in result.output
    assert "Traceback" not in result.output


def test_validate_reports_a_listed_name_too_long_for_the_os(fixture_dataset: Path) -> None:
    """Found by the fuzzer (explore profile): a manifest path of 300 characters made
    Path.is_file() raise ENAMETOOLONG, a traceback instead of a reported problem."""
    import json

    manifest = json.loads((fixture_dataset / "manifest.json").read_text())
    manifest["files"][0]["path"] = "x" * 300
    (fixture_dataset / "manifest.json").write_text(json.dumps(manifest))
    result = CliRunner().invoke(cli, ["validate", str(fixture_dataset)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 1, result.output
    assert "cannot be read" in result.output
