"""`gharuntime learn OWNER/NAME --out DIR` (or `--from-dataset DATASET`): a team's own
repositories → a model `predict` uses with each job's own history."""

from __future__ import annotations

import time
from pathlib import Path

import click
from click.core import ParameterSource

from gharuntime.baselines.methods import METHODS
from gharuntime.cli.errors import UsageProblem
from gharuntime.cli.output import err_console, out_console, styled
from gharuntime.cli.progress import ProgressView
from gharuntime.crawler.assembly import crawl_window
from gharuntime.crawler.client import api_url_problem
from gharuntime.jsonout import strict_dumps
from gharuntime.learn import (
    LEARN_TRACKS,
    LearnRequest,
    check_repo_name,
    run_learn,
    token_from_env,
)
from gharuntime.paramtypes import Text

__all__ = ["learn_command"]


def _methods() -> list[str]:
    """Methods that fit both tracks learn fits (the history track needs a method reading it)."""
    return sorted(n for n in METHODS if n in ("lightgbm", "xgboost", "catboost"))


@click.command("learn")
@click.argument("repos", nargs=-1, type=Text(200))
@click.option(
    "--out",
    required=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="The learned folder (created; an unfinished one is continued).",
)
@click.option(
    "--token-env",
    default="GITHUB_TOKEN",
    show_default=True,
    type=Text(200),
    help="The environment variable holding the token (never printed, never written).",
)
@click.option(
    "--api-url",
    default="https://api.github.com",
    show_default=True,
    envvar="GITHUB_API_URL",
    type=Text(2000),
    help="API root: GitHub Enterprise Server (https://HOST/api/v3) or a simulated GitHub.",
)
@click.option(
    "--since", type=Text(40), help="Runs created from this date [default: 90 days before now]."
)
@click.option("--until", type=Text(40), help="Runs created up to this date [default: now].")
@click.option(
    "--method",
    type=click.Choice(_methods()),
    default="lightgbm",
    show_default=True,
    help="The tree fitted on both tracks.",
)
@click.option(
    "--max-retries",
    type=click.IntRange(0, 100),
    default=6,
    show_default=True,
    help="Retries of a failing request before the crawl stops (a rerun continues it).",
)
@click.option("--fresh", is_flag=True, help="Run every step again, even those finished earlier.")
@click.option(
    "--from-dataset",
    "from_dataset",
    type=click.Path(path_type=Path, file_okay=False, exists=True),
    help="Learn from this dataset folder (`gharuntime build`'s output, e.g. built from an "
    "archive of your runs) instead of crawling: validated, copied into OUT/dataset, fitted. "
    "No repository names, no token.",
)
@click.option("--json", "as_json", is_flag=True, help="Print learn.json on stdout when done.")
def learn_command(
    repos: tuple[str, ...],
    out: Path,
    token_env: str,
    api_url: str,
    since: str | None,
    until: str | None,
    method: str,
    max_retries: int,
    fresh: bool,
    from_dataset: Path | None,
    as_json: bool,
) -> None:
    """Learn your own repositories' jobs: crawl their runs, build a dataset, fit a model.

    \b
    Steps (each said as it finishes):
      check   the token is accepted and reads every repository (nothing written before)
      crawl   completed runs, their jobs and workflow YAML, into OUT/raw
      build   OUT/dataset: the jobs and each one's own recent durations
      fit     OUT/history (history track: the best default for a known repository) and
              OUT/config (config track: the fallback for a job that never ran), each scored
              on the repositories' latest runs
    Then `gharuntime predict WORKFLOW.yml --model OUT` predicts each job from its own recent
    runs (refresh them with --history-from DATASET), a new job from its configuration, and says
    which per job.

    \b
    Resumable: after a kill or a failure, run the same command again; it keeps the finished
    steps whose files are still there unchanged (OUT/steps/*.step.json) and continues the crawl
    where it stopped. The token is read from the variable --token-env names (it must look like
    a GitHub token), and never printed or written. OUT is learn's own: marked first
    (OUT/.gharuntime-learn), written by one run at a time.

    \b
    From a dataset you already built (`gharuntime build`, e.g. from an archive of your runs):
    `gharuntime learn --from-dataset DATASET --out OUT` validates it against the contract
    (nothing is written for one that fails), copies it into OUT/dataset and fits both tracks:
    the same folder, for `predict --model OUT`.

    \b
    Exit codes: 0 done, 2 refused (a repository GitHub does not show to the token, a missing
    token, an OUT that holds something else or that another learn is writing, no completed job
    in the window, a dataset that is not valid), with the fix.
    Example:
      GITHUB_TOKEN=... gharuntime learn octo-org/api octo-org/web --out models/mine
      gharuntime predict .github/workflows/ci.yml --model models/mine --repo octo-org/api
      gharuntime learn --from-dataset out/our-dataset --out models/ours
    """
    if from_dataset is not None:
        request = _dataset_request(from_dataset, repos, out, method, fresh)
        source = f"the dataset {from_dataset} → {out}/ (validate, copy"
    else:
        if not repos:
            raise UsageProblem(
                "no repository to learn from",
                where="REPOS",
                fix="name one as OWNER/NAME, or give --from-dataset DATASET",
            )
        for repo in repos:
            problem = check_repo_name(repo)
            if problem:
                raise UsageProblem(problem, where="REPOS", fix="name each repository as OWNER/NAME")
        problem = api_url_problem(api_url)
        if problem:
            raise UsageProblem(problem, where="--api-url")
        a, b = crawl_window(since, until)
        request = LearnRequest(
            repos=tuple(dict.fromkeys(repos)),
            out=out,
            tokens=(token_from_env(token_env),),
            api_url=api_url,
            since=a,
            until=b,
            method=method,
            max_retries=max_retries,
            fresh=fresh,
        )
        source = f"{', '.join(request.repos)} → {out}/ (crawl, build"
    err_console.print(
        f"learn: {source}, fit {method} on the {' and '.join(LEARN_TRACKS)} tracks)",
        highlight=False,
        markup=False,
    )
    started = time.monotonic()

    def done(step: str, summary: str) -> None:
        err_console.print(
            f"{step}: {summary} ({time.monotonic() - started:.0f} s elapsed)",
            highlight=False,
            markup=False,
        )

    with ProgressView(first="starting") as report:
        result = run_learn(request, progress=report, step_done=done)
    if result.kept:
        err_console.print(
            f"kept {len(result.kept)} step(s) finished earlier ({', '.join(result.kept)}); "
            "--fresh runs them again",
            highlight=False,
            markup=False,
        )
    err_console.print(
        styled(
            ("done", "green"),
            f" in {time.monotonic() - started:.0f} s: gharuntime predict WORKFLOW.yml --model {out}",
        )
    )
    if as_json:
        out_console.print_json(strict_dumps(result.doc))


_CRAWL_ONLY = ("token_env", "api_url", "since", "until", "max_retries")


def _dataset_request(
    dataset: Path, repos: tuple[str, ...], out: Path, method: str, fresh: bool
) -> LearnRequest:
    """The request of `learn --from-dataset`; a repository name or a crawl's option given with
    it is refused (exit 2): the dataset is learnt as it was built."""
    if repos:
        raise UsageProblem(
            f"{len(repos)} repository name(s) given with --from-dataset: the dataset's own "
            "repositories are learnt",
            where="REPOS",
            fix="drop the names (predict --repo OWNER/NAME picks one later), or crawl them "
            "without --from-dataset",
        )
    ctx = click.get_current_context()
    given = [
        "--" + name.replace("_", "-")
        for name in _CRAWL_ONLY
        if ctx.get_parameter_source(name) == ParameterSource.COMMANDLINE
    ]
    if given:
        raise UsageProblem(
            f"{', '.join(given)} appl{'ies' if len(given) == 1 else 'y'} to a crawl, and "
            "--from-dataset crawls nothing",
            where=given[0],
            fix="drop it: the dataset's jobs are learnt as they were built",
        )
    return LearnRequest(
        repos=(), out=out, tokens=(), method=method, fresh=fresh, from_dataset=dataset
    )
