"""`gharuntime`: the root command group. Each command lives in its own module and is added here."""

from __future__ import annotations

import errno
from typing import Any, Final

import click

from gharuntime.cli.baseline import baseline_command
from gharuntime.cli.build import build_command
from gharuntime.cli.crawl import crawl_command
from gharuntime.cli.diff import diff_command
from gharuntime.cli.errors import EXIT_REFUSED, UsageProblem, report
from gharuntime.cli.eval import eval_command
from gharuntime.cli.hub import download_command, publish_command
from gharuntime.cli.laser import laser_group
from gharuntime.cli.leaderboard import leaderboard_command
from gharuntime.cli.learn import learn_command
from gharuntime.cli.output import safe_streams, terminal_safe
from gharuntime.cli.pipeline import pipeline_command
from gharuntime.cli.predict import predict_command
from gharuntime.cli.simulate import simulate_command
from gharuntime.cli.validate import validate_command
from gharuntime.errors import GharuntimeError
from gharuntime.version import __version__

__all__ = ["COMMANDS", "cli", "main"]


def _make_safe(exc: click.ClickException) -> None:
    """click's message, terminal-safe (click types it Final; it is a plain attribute)."""
    vars(exc)["message"] = terminal_safe(exc.message)


class _Root(click.Group):
    """The root group: the one place a refusal (any GharuntimeError a command raises) becomes
    its message on stderr and exit 2, with no traceback; click's own usage errors (which quote
    what was typed) are made terminal-safe here before click prints them."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.ClickException as exc:
            _make_safe(exc)
            raise

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except GharuntimeError as exc:
            report(exc)
            ctx.exit(EXIT_REFUSED)
        except click.ClickException as exc:
            _make_safe(exc)
            raise
        except OSError as exc:
            # a path the file system cannot name is bad input, wherever a command first
            # touches it (Path.exists raises for it); other OS errors stay the command's
            if exc.errno != errno.ENAMETOOLONG:
                raise
            name = str(exc.filename or "")
            shown = name if len(name) <= 60 else f"{name[:40]}…({len(name)} characters)"
            report(
                UsageProblem(
                    f"{shown}: a name longer than the file system allows (255 bytes a name); "
                    "give a shorter path"
                )
            )
            ctx.exit(EXIT_REFUSED)


@click.group(
    cls=_Root,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.version_option(__version__, "--version", "-V", prog_name="gharuntime")
def cli() -> None:
    """GHARuntime: predict how long a GitHub Actions job runs from its configuration.

    \b
    The data flows one way, one command per stage:
      simulate / crawl  ->  build  ->  dataset folder  ->  baseline  ->  eval  ->  leaderboard
    The whole flow in one command, offline (simulated GitHub → leaderboard):
      gharuntime pipeline --scale small --out out
    Or stage by stage:
      gharuntime build --source simulated --scale tiny --out out/ds
      gharuntime baseline lightgbm --dataset out/ds --track config --out out/lgb.jsonl
      gharuntime eval out/lgb.jsonl --dataset out/ds
    Each command's --help says more.
    """
    safe_streams()


COMMANDS: Final[tuple[click.Command, ...]] = (
    validate_command,
    baseline_command,
    predict_command,
    learn_command,
    eval_command,
    leaderboard_command,
    pipeline_command,
    build_command,
    crawl_command,
    simulate_command,
    publish_command,
    download_command,
    diff_command,
    laser_group,
)
"""Every command of `gharuntime` (its --help lists them by name); a new one is an entry here."""

for _command in COMMANDS:
    cli.add_command(_command)


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="gharuntime")


if __name__ == "__main__":
    main()
