"""`gharuntime crawl`: collect runs, jobs, workflow YAML and logs from GitHub into a raw store."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click
from rich.progress import BarColumn, Progress, TimeElapsedColumn, TimeRemainingColumn
from rich.table import Table

from gharuntime.cli.errors import UsageProblem
from gharuntime.cli.output import err_console, out_console, plain_column, styled
from gharuntime.crawler.assembly import CrawlRequest, crawl_selection_options, plan_crawl
from gharuntime.crawler.client import BadCredentials, CrawlError, RequestFailed
from gharuntime.crawler.options import CrawlResult
from gharuntime.crawler.progress import CrawlEvent, CrawlStats
from gharuntime.jsonout import strict_dumps
from gharuntime.paramtypes import FiniteFloatRange, Text

__all__ = ["crawl_command"]


class _Display:
    """Renders crawl events as a live progress display on stderr."""

    def __init__(self, stats: CrawlStats, quota: Any) -> None:
        self.stats = stats
        self.quota = quota
        self.progress = Progress(
            plain_column(style="bold"),
            BarColumn(),
            plain_column("{task.fields[repos]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            plain_column("{task.fields[line]}"),
            console=err_console,
            transient=False,
        )
        self.task = self.progress.add_task("crawling", total=None, line="", repos="")
        self._last = 0.0
        self.waiting = ""
        self.total = 0

    def __call__(self, event: CrawlEvent) -> None:
        d = event.data
        if event.kind == "plan":
            self.progress.update(self.task, total=d["repositories"])
            self.total = d["repositories"]
            err_console.print(
                f"crawling {d['repositories']} repositories, runs created {d['since']} .. {d['until']}"
            )
        elif event.kind == "repository" and d.get("state") == "done":
            self.progress.advance(self.task)
        elif event.kind == "repository" and d.get("state") == "renamed":
            err_console.print(
                styled(("renamed", "yellow"), f" {d['name']} -> {d['to']} (followed)")
            )
        elif event.kind == "problem":
            err_console.print(
                styled(("problem", "red"), f" {d['what']} {d['where']}: {d['message']}")
            )
        elif event.kind == "wait":
            if d["seconds"] >= 5:
                until = time.strftime("%H:%M:%S", time.localtime(time.time() + d["seconds"]))
                err_console.print(
                    styled(
                        ("waiting", "yellow"),
                        f" {d['seconds']:.0f} s (until {until}): {d['reason']}",
                    )
                )
            self.waiting = f"  waiting {d['seconds']:.0f}s: {d['reason']}"
            self._refresh(force=True)
            return
        self._refresh()

    def refresh(self) -> None:
        """Show the latest counts now."""
        self._refresh(force=True)

    def _refresh(self, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._last < 0.2:
            return
        self._last = now
        r = self.stats.records
        quota = self.quota()
        line = (
            f"runs {r.get('run', 0)}  jobs {r.get('job', 0)}  requests {self.stats.total_requests}"
            + (f"  quota left {quota}" if quota is not None else "")
            + (f"  retries {sum(self.stats.retries.values())}" if self.stats.retries else "")
            + self.waiting
        )
        self.waiting = ""
        done = int(self.progress.tasks[0].completed)
        self.progress.update(self.task, line=line, repos=f"{done}/{self.total} repos")


def _summary(result: CrawlResult, elapsed: float) -> None:
    s = result.stats.as_dict()
    table = Table(
        title=f"crawl {result.crawl_id}: {result.since} .. {result.until}", show_header=False
    )
    table.add_row("wall time", f"{elapsed:.1f} s")
    table.add_row(
        "repositories", ", ".join(f"{k} {v}" for k, v in s["repositories"].items()) or "0"
    )
    table.add_row("requests", str(s["requests"]))
    for endpoint, n in s["requests_by_endpoint"].items():
        table.add_row(f"  {endpoint}", str(n))
    table.add_row("304 not modified", str(s["not_modified"]))
    table.add_row("retries", ", ".join(f"{k} {v}" for k, v in s["retries"].items()) or "0")
    table.add_row("waited", f"{s['waited_s']:.1f} s")
    table.add_row("records stored", ", ".join(f"{k} {v}" for k, v in s["records"].items()) or "0")
    table.add_row("failures", ", ".join(f"{k} {v}" for k, v in s["failures"].items()) or "none")
    err_console.print(table)


def _as_json(result: CrawlResult) -> dict[str, Any]:
    return {
        "crawl_id": result.crawl_id,
        "since": result.since,
        "until": result.until,
        "repositories": result.repositories,
        "finished": result.finished,
        **result.stats.as_dict(),
        "problems": result.failures,
    }


@click.command("crawl")
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(path_type=Path, file_okay=False),
    help="Raw store folder to write (created; an existing one is continued).",
)
@crawl_selection_options()
@click.option("--logs/--no-logs", default=False, help="Also download each job's log (redacted).")
@click.option(
    "--log-cap",
    "log_cap_mb",
    type=FiniteFloatRange(0.001, 1_000),
    default=20.0,
    show_default=True,
    help="Largest log kept, in MB; bigger ones are stored as too_large with their size.",
)
@click.option(
    "--shard",
    "shard",
    type=Text(40),
    metavar="K/N",
    help="Crawl only shard K of N (stable hash of owner/name).",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1, 32),
    default=4,
    show_default=True,
    help="Requests in flight at once.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the end summary as JSON on stdout.")
@click.option(
    "--backoff",
    "backoff",
    type=(FiniteFloatRange(0, 3600), FiniteFloatRange(0, 86_400)),
    default=(1.0, 60.0),
    show_default=True,
    metavar="BASE CAP",
    help="Jittered exponential backoff: first delay and cap, in seconds.",
)
@click.option(
    "--secondary-wait",
    type=FiniteFloatRange(0, 86_400),
    default=60.0,
    show_default=True,
    help="Seconds to wait on a secondary rate limit that gives no Retry-After.",
)
@click.option(
    "--yaml-strategy",
    type=click.Choice(["blob-oid", "per-run"]),
    default="blob-oid",
    hidden=True,
    help="per-run: the naive reference (YAML fetched for every run); benchmarks only.",
)
@click.option(
    "--log-route",
    type=click.Choice(["attempt", "job"]),
    default="attempt",
    show_default=True,
    help="With --logs: attempt = one log archive per run attempt (fewest requests); "
    "job = one log request per job.",
)
@click.option(
    "--flush-records",
    type=click.IntRange(1, 1_000_000),
    default=2000,
    hidden=True,
    help="Records per shard (a shard is also written every 5 s).",
)
def crawl_command(**options: Any) -> None:
    """Collect GitHub Actions runs, jobs, workflow YAML and logs into a raw store.

    For each repository: its metadata, its workflows, the completed runs created in the window
    (--since/--until, by default the last 90 days), the jobs of every run attempt, the workflow
    YAML at each run's head commit (fetched once per distinct file content) and, with --logs,
    each job's log. Interrupt it or kill it at any moment: the same command continues where it
    stopped, storing nothing twice. `gharuntime build` reads the store.

    \b
    Exit codes: 0 done, 1 done but some things could not be fetched (see the summary),
    2 usage error or bad token.
    Examples:
      GITHUB_TOKEN=... gharuntime crawl --repos repos.txt --out raw/ --max-runs-per-workflow 5
      gharuntime crawl --search 'stars:>100 pushed:>2025-06-01' --max-repos 500 \\
          --token-file tokens.txt --shard 1/4 --logs --out raw-1/
      gharuntime crawl --api-url http://127.0.0.1:8765 --repos repos.txt --out raw/
    """
    as_json = options.pop("as_json")
    plan = plan_crawl(CrawlRequest(**options))
    if not plan.tokens:
        err_console.print(
            styled(
                ("no token", "yellow"),
                ": unauthenticated requests get 60 an hour; pass --token-file or set GITHUB_TOKEN",
            )
        )
    client = plan.client
    display = _Display(client.stats, client.pool.remaining)
    client.on_event = display
    started = time.monotonic()
    try:
        with display.progress:
            result = plan.run(display)
            display.refresh()
    except BadCredentials as exc:  # scrubbed again, and not chained: no token can show
        raise UsageProblem(client.scrub(str(exc))) from None
    except RequestFailed as exc:
        hint = " Is --api-url right, and is the server up?" if exc.reason == "connection" else ""
        err_console.print(
            styled(
                ("error", "red"),
                f": {client.scrub(str(exc))} ({client.scrub(client.url(exc.where))}).{hint}\n"
                "Rerun the same command to continue.",
            )
        )
        sys.exit(1)
    except CrawlError as exc:
        err_console.print(
            styled(
                ("error", "red"), f": {client.scrub(str(exc))}\nRerun the same command to continue."
            )
        )
        sys.exit(1)
    except KeyboardInterrupt:
        err_console.print(
            "interrupted; what was fetched is stored. Rerun the same command to continue."
        )
        sys.exit(130)
    _summary(result, time.monotonic() - started)
    if as_json:
        out_console.print_json(strict_dumps(_as_json(result)))
    if result.failures:
        err_console.print(
            f"{len(result.failures)} thing(s) could not be fetched (stored as error records, "
            "listed above). Rerun the same command to retry those that may succeed later; "
            "missing repositories are not retried."
        )
        sys.exit(1)
    err_console.print(styled(("done", "green"), f": raw store {plan.out}"))
