"""One error base: every exception the library defines derives from GharuntimeError (keeping
the builtin base its callers catch), and the command line turns any of them into its message on
stderr and exit 2, in one place, with no traceback."""

from __future__ import annotations

import importlib
import inspect
import pickle
import pkgutil
from pathlib import Path

import pytest
from click.testing import CliRunner

import gharuntime
from gharuntime.cli.main import cli
from gharuntime.errors import GharuntimeError


def _library_exceptions() -> dict[str, type[BaseException]]:
    """Every exception class defined in a module of the gharuntime package (crawler/,
    baselines/, leaderboard/ and data_cards/ included: they install under it, and a source
    checkout registers them there), by qualified name."""
    found: dict[str, type[BaseException]] = {}
    names = ["gharuntime"]
    roots = [("gharuntime.", gharuntime.__path__)]
    for sub in ("crawler", "baselines", "leaderboard", "data_cards"):  # setup.py's MAPPED
        package = importlib.import_module(f"gharuntime.{sub}")  # beside gharuntime/ in a checkout
        roots.append((f"gharuntime.{sub}.", package.__path__))
    names += [info.name for prefix, path in roots for info in pkgutil.walk_packages(path, prefix)]
    for name in dict.fromkeys(names):
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:  # an optional extra that is not installed
            if (exc.name or "").split(".")[0] == "gharuntime":
                raise
            continue
        for attr, obj in vars(module).items():
            if (
                inspect.isclass(obj)
                and issubclass(obj, BaseException)
                and obj.__module__ == module.__name__
            ):
                found[f"{module.__name__}.{attr}"] = obj
    return found


def test_every_library_exception_derives_from_the_base() -> None:
    found = _library_exceptions()
    # the walk reaches every installed folder, not just gharuntime/ itself
    for name in (
        "gharuntime.dataset.DatasetError",
        "gharuntime.crawler.client.CrawlError",
        "gharuntime.baselines.method.MethodError",
        "gharuntime.leaderboard.registry.LeaderboardError",
        "gharuntime.cli.errors.UsageProblem",
    ):
        assert name in found
    strays = sorted(name for name, cls in found.items() if not issubclass(cls, GharuntimeError))
    assert strays == [], "exceptions that do not derive from gharuntime.errors.GharuntimeError"


def test_builtin_bases_are_kept_for_callers_that_catch_them() -> None:
    from gharuntime.billing.prices import PriceError
    from gharuntime.readfile import InputFileError
    from gharuntime.sim.graphql import GraphQLError

    assert issubclass(InputFileError, OSError) and issubclass(InputFileError, ValueError)
    assert issubclass(PriceError, ValueError) and issubclass(GraphQLError, ValueError)
    with pytest.raises(OSError, match="give a file"):
        raise InputFileError("x is a folder, not a regular file; give a file")


def test_where_and_fix_render_around_the_message_and_survive_pickling() -> None:
    assert str(GharuntimeError("no rates")) == "no rates"
    err = GharuntimeError("no rates", where="p.yml:3", fix="add `rates:`")
    assert str(err) == "p.yml:3: no rates\n  fix: add `rates:`"
    assert err.what == "no rates"
    again = pickle.loads(pickle.dumps(err))  # errors cross worker processes
    assert str(again) == str(err) and again.where == "p.yml:3"


def test_errors_that_name_their_place_read_as_before() -> None:
    from gharuntime.billing.prices import PriceError
    from gharuntime.crawler.client import RequestFailed
    from gharuntime.workflow import WorkflowError

    assert str(PriceError("is empty", "p.yml", None, "give `rates:`")) == (
        "p.yml: is empty\n  fix: give `rates:`"
    )
    assert str(WorkflowError("no `jobs:`", 4, "ci.yml")) == "ci.yml:4: no `jobs:`"
    assert str(WorkflowError("no `jobs:`")) == "workflow: no `jobs:`"
    # RequestFailed's `where` is the request path, shown beside the message by the CLI
    failed = RequestFailed("HTTP 500", where="/repos/a/b", status=500, reason="http")
    assert str(failed) == "HTTP 500" and failed.where == "/repos/a/b"


def test_a_library_error_from_a_command_exits_2_with_its_message(tmp_path: Path) -> None:
    """PriceError reaches the root group uncaught; it prints `error: ...` and exits 2."""
    workflow = tmp_path / "ci.yml"
    workflow.write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps: [{run: x}]\n"
    )
    prices = tmp_path / "prices[bold].yml"  # a path rich would read as markup
    prices.write_text("rates: 3\n")
    (tmp_path / "model").mkdir()
    result = CliRunner().invoke(
        cli, ["predict", str(workflow), "--model", str(tmp_path / "model"), "--prices", str(prices)]
    )
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)
    assert result.stderr == (
        f"error: {prices}:1: `rates:` must be a mapping\n  fix: write `rates:` as `key: value` lines\n"
    )
    assert "Traceback" not in result.output


def test_a_refusal_with_its_own_layout_prints_every_line(tmp_path: Path) -> None:
    bad = tmp_path / "r.json"
    bad.write_text("not json")
    result = CliRunner().invoke(
        cli, ["leaderboard", "add", str(bad), "--results", str(tmp_path / "results")]
    )
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    assert lines[0].startswith(f"error {bad}: not JSON")
    assert lines[-1] == f"{bad} not added: nothing written"
    assert "Traceback" not in result.output and not (tmp_path / "results").exists()
