"""`gharuntime leaderboard`: check every result, rank each table, write README.md, index.html and
each dataset folder's summary.md (and the table regions of --readme files), or with --check say
which of them are stale; `gharuntime leaderboard add RESULT.json` files one result under its
canonical name."""

from __future__ import annotations

from pathlib import Path

import click

from gharuntime.cli.errors import Refusal
from gharuntime.cli.output import err_console, styled
from gharuntime.cli.progress import ProgressView
from gharuntime.leaderboard.outputs import build_leaderboard, stale_files
from gharuntime.leaderboard.registry import LeaderboardError, add_result

__all__ = ["leaderboard_command"]

_RESULTS = Path("leaderboard/results")
_OUT = Path("leaderboard")


def _refusal(exc: LeaderboardError, what: str) -> Refusal:
    """Each problem on its own line, then what was refused."""
    return Refusal(
        *[styled(("error", "red"), f" {problem}") for problem in exc.problems],
        styled((what, "bold red"), ": nothing written"),
    )


@click.group("leaderboard", invoke_without_command=True)
@click.option(
    "--results",
    type=click.Path(path_type=Path, file_okay=False),
    default=_RESULTS,
    show_default=True,
    help="The results folder: RESULTS/<dataset>/<config>-<track>-<method>.json (and "
    "transfer-<training dataset>-<config>-<track>-<method>.json).",
)
@click.option(
    "--out",
    type=click.Path(path_type=Path, file_okay=False),
    default=_OUT,
    show_default=True,
    help="Folder to write README.md and index.html into.",
)
@click.option(
    "--summaries/--no-summaries",
    default=True,
    show_default=True,
    help="Also write RESULTS/<dataset>/summary.md, each dataset folder's results at a glance.",
)
@click.option(
    "--readme",
    "readmes",
    multiple=True,
    type=click.Path(path_type=Path, dir_okay=False),
    help="A Markdown file whose marked table regions are rendered from the results "
    "(`<!-- gharuntime:table dataset=NAME config=CONFIG track=TRACK -->` ... "
    "`<!-- /gharuntime:table -->`; trained_on=NAME for a transfer table); repeatable. "
    "Everything outside the regions is kept.",
)
@click.option(
    "--check",
    is_flag=True,
    help="Write nothing: compare every file the command writes with what the results give, "
    "and exit 1 naming each one that is missing or differs.",
)
@click.pass_context
def leaderboard_command(
    ctx: click.Context,
    results: Path,
    out: Path,
    summaries: bool,
    readmes: tuple[Path, ...],
    check: bool,
) -> None:
    """Check every result, rank each (dataset, config, track) table, write the Markdown and page.

    \b
    Every result file must be a `gharuntime eval --out` result (result_version 2) filed under
    its canonical name; within a table one dataset revision, one result per method, the same
    records and the same bootstrap resamples. Methods are ranked by RMSLE into rank groups:
    a method shares its group's leader's group when their paired bootstrap difference interval
    includes zero.

    \b
    A result whose `trained_on` names another dataset (methods trained on it, scored here) is
    filed as transfer-<training dataset>-<config>-<track>-<method>.json and ranked in its own
    transfer table, after the plain tables: one training dataset, revision and split a table.

    \b
    Besides README.md and index.html it writes RESULTS/<dataset>/summary.md (unless
    --no-summaries) and the table regions of each --readme file: every file rendered from the
    results alone (no date, no machine path), so --check can tell a stale one.

    \b
    Exit codes: 0 written (with --check: every file up to date), 1 with --check: a file is
    stale (each named; run the same command without --check), 2 a bad result or region (each
    named; nothing written).
    Examples:
      gharuntime leaderboard add out/lgb.result.json --results leaderboard/results
      gharuntime leaderboard --results leaderboard/results --out leaderboard
      gharuntime leaderboard --results leaderboard/results --out leaderboard --readme README.md --check
    """
    if ctx.invoked_subcommand is not None:
        return
    if check:
        try:
            stale = stale_files(results, out, summaries=summaries, readmes=readmes)
        except LeaderboardError as exc:
            raise _refusal(exc, "cannot check the leaderboard") from exc
        for line in stale:
            err_console.print(styled(("stale", "red"), f" {line}"))
        if stale:
            err_console.print(
                styled(
                    ("stale", "bold red"),
                    f": {len(stale)} file(s) differ from what {results} gives; run the same "
                    "command without --check and commit what it writes",
                )
            )
            raise SystemExit(1)
        err_console.print(styled(("up to date", "green"), f": every file matches {results}"))
        return
    try:
        board = build_leaderboard(results, out, summaries=summaries, readmes=readmes)
    except LeaderboardError as exc:
        raise _refusal(exc, "cannot build the leaderboard") from exc
    except OSError as exc:
        raise Refusal(styled(("error", "red"), f" cannot write the leaderboard: {exc}")) from exc
    rows = sum(len(v.rows) for v in board.views)
    err_console.print(
        styled(
            ("wrote", "green"),
            f" {board.markdown} and {board.page}: {rows} results in {len(board.views)} tables",
        )
    )
    for path in (*board.summaries, *board.readmes):
        err_console.print(styled(("wrote", "green"), f" {path}"))


@leaderboard_command.command("add")
@click.argument("result", type=click.Path(path_type=Path, dir_okay=False))
@click.option(
    "--results",
    type=click.Path(path_type=Path, file_okay=False),
    default=_RESULTS,
    show_default=True,
    help="The results folder to file it in.",
)
@click.option(
    "--allow-partial",
    is_flag=True,
    help="Accept a result scored with --allow-partial (records without a prediction); the "
    "table marks it.",
)
@click.option("--replace", is_flag=True, help="Replace the table's result of the same method.")
def add_command(result: Path, results: Path, allow_partial: bool, replace: bool) -> None:
    """Check RESULT.json and file it as RESULTS/<dataset>/<config>-<track>-<method>.json
    (a transfer result, with `trained_on`: transfer-<training dataset>-<config>-<track>-<method>.json).

    Refuses (exit 2, nothing written) a file that is not a valid result, a method the table
    already holds (unless --replace), another dataset revision, records or resamples than the
    table's, another training revision or split than a transfer table's, and a partial
    submission unless --allow-partial says so.
    """
    try:
        path = add_result(result, results, allow_partial=allow_partial, replace=replace)
    except LeaderboardError as exc:
        raise _refusal(exc, f"{result} not added") from exc
    except OSError as exc:
        raise Refusal(styled(("error", "red"), f" cannot write into {results}: {exc}")) from exc
    err_console.print(styled(("filed", "green"), f" {result} as {path}"))


@leaderboard_command.command("reproduce")
@click.argument("result", type=click.Path(path_type=Path), required=False)
@click.option(
    "--all",
    "all_dir",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    help="Reproduce every result under this folder whose dataset is at hand, and write a table.",
)
@click.option(
    "--dataset",
    "datasets",
    multiple=True,
    help="A dataset folder or Hub id (ORG/NAME@REVISION) to use where its revision is the "
    "result's (repeatable); then the folder the result names, then the simulated world rebuilt "
    "when the result is on one.",
)
@click.option(
    "--work",
    type=click.Path(path_type=Path, file_okay=False),
    help="Keep rebuilt datasets here (reused by later runs) instead of a temporary folder.",
)
@click.option(
    "--table",
    type=click.Path(path_type=Path, dir_okay=False),
    help="With --all: write TABLE.md and TABLE.json [default: ALL/reproduced]; never an input "
    "(a result, a dataset) or a file that is not such a table.",
)
def reproduce_command(
    result: Path | None,
    all_dir: Path | None,
    datasets: tuple[str, ...],
    work: Path | None,
    table: Path | None,
) -> None:
    """Re-run RESULT.json from its own record (dataset revision, method, parameters, seed,
    resamples) and compare every scored number with the recorded one.

    \b
    The result is checked whole before anything is built or fitted (the schema, every value,
    the method's parameters): a file that is not a valid result is refused. Prints, per
    metric, the recorded value, the reproduced one and the difference, then per section the
    numbers compared (per-resample values, interval and calibration numbers, breakdowns,
    counts), then one line: reproduced exactly; reproduced within the method's stated
    tolerance (the trees and naive methods 1e-9, LASER 0.02; absolute up to 1, relative
    above; counts exactly); or not reproduced, with why (another commit, and what changed in
    the method's files since; another gharuntime version).

    \b
    Exit codes: 0 reproduced, 1 not reproduced, 2 refused (not a valid result) or cannot be
    re-run here (no provenance, the dataset revision not at hand offline: give it with
    --dataset). With --all every result is tried and the table written: 2 when one was
    refused, else 1 when one was not reproduced.
    Examples:
      gharuntime leaderboard reproduce leaderboard/results/gharuntime-sim-small/temporal-config-lightgbm.json
      gharuntime leaderboard reproduce --all leaderboard/results --work data/
    """
    from gharuntime.leaderboard.reproduce import ReproduceError, reproduce_result

    if (result is None) == (all_dir is None):
        raise Refusal("give one RESULT.json, or --all RESULTS_DIR")
    if all_dir is not None:
        _reproduce_all(all_dir, datasets, work, table)
        return
    assert result is not None
    try:
        with ProgressView(first="starting") as report:
            item = reproduce_result(result, datasets=datasets, work=work, progress=report)
    except ReproduceError as exc:
        raise Refusal(str(exc)) from exc
    rows = item.metric_rows
    width = max((len(row.metric) for row in rows), default=6)
    click.echo(f"{'metric':<{width}}  {'recorded':>16}  {'reproduced':>16}  {'difference':>11}")
    for row in rows:
        diff = "—" if row.difference is None else f"{row.difference:+.3g}"
        click.echo(
            f"{row.metric:<{width}}  {_num(row.committed):>16}  {_num(row.reproduced):>16}  "
            f"{diff:>11}"
        )
    for section in item.sections:
        if section.name == "metrics":
            continue
        past = f", {section.beyond:,} past the tolerance" if section.beyond else ""
        click.echo(
            f"{section.name}: {section.numbers:,} numbers, largest difference "
            f"{section.largest:.3g}{past}"
        )
    for row in item.beyond[:_SHOWN]:
        click.echo(
            f"  {row.metric}: recorded {_num(row.committed)}, reproduced {_num(row.reproduced)}"
        )
    click.echo(item.verdict())
    if not item.reproduced:
        raise SystemExit(1)


_SHOWN = 10  # numbers past the tolerance printed by name


def _reproduce_all(
    all_dir: Path, datasets: tuple[str, ...], work: Path | None, table: Path | None
) -> None:
    """`reproduce --all`: the table's place checked first, every result tried, the table
    written, then the exit code."""
    from gharuntime.leaderboard.reproduce import reproduce_all, result_files
    from gharuntime.leaderboard.reproduce_table import table_problems, write_table

    out = table or all_dir / "reproduced"
    inputs = [*result_files(all_dir), *(Path(d) for d in datasets if Path(d).exists())]
    problems = table_problems(out, all_dir, inputs)
    if problems:
        raise Refusal(
            *[styled(("error", "red"), f" --table: {problem}") for problem in problems],
            styled(("nothing run", "bold red"), ": give --table a new path outside the results"),
        )
    with ProgressView(first="starting") as report:
        run = reproduce_all(all_dir, datasets=datasets, work=work, progress=report)
    md, js = write_table(run, out)
    for item in run.done:
        err_console.print(f"{item.result}: {item.verdict()}", markup=False)
    for skipped in run.not_run:
        err_console.print(f"{skipped.result}: not run: {skipped.reason}", markup=False)
    for skipped in run.refused:
        err_console.print(f"{skipped.result}: refused: {skipped.reason}", markup=False)
    summary = (
        f"{len(run.done) - len(run.failed)} of {len(run.done)} reproduced, "
        f"{len(run.not_run)} not run, {len(run.refused)} refused; table: {md} and {js}"
    )
    if run.refused:
        raise Refusal(
            styled(("error", "red"), f": {len(run.refused)} refused (each named above); {summary}"),
            "  fix: correct or remove each refused file (a result is the file `gharuntime eval "
            "--out` writes), then run again",
        )
    err_console.print(summary, markup=False)
    if run.failed:
        raise SystemExit(1)


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.10g}"
