"""Issue 37 class 8, messages, and the quantile sidecar under hostile input: eval's tables show
no markup as text; a sidecar that is a FIFO, a folder, a line of megabytes, JSON nested 100,000
deep or 10,003 levels is refused at once with one clear problem (never a block, a traceback or
a cascade of problems); scoring is linear in the number of levels; `--vs` compares pinball
losses over the levels both sidecars give; and every option the hostile-input page names
exists on the command it names it for."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
import pytest
from fuzz_support import check, invoke, run_limited
from hostile_support import build_world, sandbox

from gharuntime.cli.main import cli
from gharuntime.eval.quantiles import MAX_LEVELS, QuantileLevels

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, fixture_dataset_master: Path) -> dict[str, Any]:
    return build_world(tmp_path_factory.mktemp("messages"), fixture_dataset_master)


@contextmanager
def within(seconds: int, what: object) -> Iterator[None]:
    def alarm(*_: Any) -> None:
        raise TimeoutError(f"{what}: over {seconds} s (blocked, or work out of bounds)")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


# ------------------------------------------------------------------ tables show no markup

MARKUP = re.compile(r"\[/?(?:dim|bold|red|green|yellow)\]|\\\[")


@pytest.mark.parametrize(
    "extra",
    [[], ["--vs", "m.jsonl"], ["--allow-partial"]],
    ids=["plain", "vs", "partial"],
)
def test_eval_tables_show_no_markup(
    world: dict[str, Any], tmp_path: Path, extra: list[str]
) -> None:
    sandbox(world, tmp_path)
    out = invoke(["eval", "m.jsonl", *extra, "--dataset", "ds", "--resamples", "5"], tmp_path)
    check(out, extra)
    assert out.code == 0 and "intervals" in out.output, out.output[-2000:]
    assert not MARKUP.search(out.output), MARKUP.search(out.output)
    assert re.search(r"\d \[[\d.,% s-]+, [\d.,% s-]+\]", out.output)  # intervals still shown


def test_gold_tables_show_no_markup(world: dict[str, Any], tmp_path: Path) -> None:
    sandbox(world, tmp_path)
    out = invoke(["eval", "--gold", "--dataset", "ds", "--resamples", "5"], tmp_path)
    check(out, "gold")
    assert out.code == 0 and not MARKUP.search(out.output), out.output[-2000:]


# ------------------------------------------------------- hostile quantile sidecars, swept


def _lines(folder: Path) -> list[str]:
    """The good sidecar's lines (kept aside: the case may replace m.quantiles.jsonl)."""
    return (folder / "good.quantiles.jsonl").read_text().splitlines()


def _deep(n: int) -> str:
    return "[" * n + "]" * n


def _levels_line(folder: Path, count: int) -> list[str]:
    ids = [json.loads(line)["id"] for line in _lines(folder)]
    step = 99.0 / count
    names = sorted({f"p{round(0.5 + i * step, 3):g}" for i in range(count)} | {"p10", "p50", "p90"})
    names.sort(key=lambda n: float(n[1:]))
    return [json.dumps({"id": i, **{f"duration_s_{n}": float(n[1:]) for n in names}}) for i in ids]


def _edit(line: str, drop: str | None = None, add: str | None = None) -> str:
    """A sidecar line with one level dropped, or one added (the p90 value, kept monotone)."""
    doc = json.loads(line)
    if drop:
        doc.pop(f"duration_s_{drop}")
    if add:
        doc[f"duration_s_{add}"] = doc["duration_s_p90"]
    return json.dumps(doc)


# name -> how to put the hostile sidecar at `path` (the sandbox folder given)
SIDECARS: dict[str, Callable[[Path, Path], None]] = {
    "fifo": lambda folder, path: os.mkfifo(path),
    "folder": lambda folder, path: path.mkdir(),
    "dev zero": lambda folder, path: path.symlink_to("/dev/zero"),
    "deep line 1": lambda folder, path: path.write_text(
        "\n".join([_deep(100_000), *_lines(folder)[1:]]) + "\n"
    ),
    "deep line 3": lambda folder, path: path.write_text(
        "\n".join([*_lines(folder)[:2], _deep(100_000), *_lines(folder)[3:]]) + "\n"
    ),
    "bad first line": lambda folder, path: path.write_text(
        "\n".join(["{bad", *_lines(folder)[1:]]) + "\n"
    ),
    "first line lacks a level": lambda folder, path: path.write_text(
        "\n".join([_edit(_lines(folder)[0], drop="p90"), *_lines(folder)[1:]]) + "\n"
    ),
    "first line adds a level": lambda folder, path: path.write_text(
        "\n".join([_edit(_lines(folder)[0], add="p95"), *_lines(folder)[1:]]) + "\n"
    ),
    "line 7 lacks a level": lambda folder, path: path.write_text(
        "\n".join([*_lines(folder)[:6], _edit(_lines(folder)[6], drop="p10"), *_lines(folder)[7:]])
        + "\n"
    ),
    "long first line": lambda folder, path: path.write_text(
        "\n".join(['{"id": "' + "x" * 2_000_000 + '"}', *_lines(folder)[1:]]) + "\n"
    ),
    "long line, no newline": lambda folder, path: path.write_text("y" * 3_000_000),
    "10,003 levels": lambda folder, path: path.write_text(
        "\n".join(_levels_line(folder, 10_003)) + "\n"
    ),
    f"{MAX_LEVELS + 1} levels": lambda folder, path: path.write_text(
        "\n".join(_levels_line(folder, MAX_LEVELS + 1)) + "\n"
    ),
}


@pytest.mark.parametrize("given", [False, True], ids=["beside", "--quantiles"])
@pytest.mark.parametrize("case", sorted(SIDECARS))
def test_a_hostile_sidecar_is_one_clear_problem(
    world: dict[str, Any], tmp_path: Path, case: str, given: bool
) -> None:
    folder = sandbox(world, tmp_path)
    path = folder / ("q.jsonl" if given else "m.quantiles.jsonl")
    (folder / "m.quantiles.jsonl").rename(folder / "good.quantiles.jsonl")
    SIDECARS[case](folder, path)
    args = ["eval", "m.jsonl", "--dataset", "ds", "--resamples", "3"]
    with within(60, case):
        out = invoke([*args, *(["--quantiles", "q.jsonl"] if given else [])], folder)
    check(out, case)
    assert out.code == 2, out.output[-2000:]
    total = re.search(r"invalid submission: ([\d,]+) problem", out.output)
    if total is None:  # refused by the option's own type, before eval runs
        assert "Invalid value for '--quantiles'" in out.output and given, out.output[-2000:]
    else:
        assert int(total[1].replace(",", "")) <= 2, out.output[-3000:]  # no cascade
    assert not any((folder / "out").iterdir())
    if case in ("fifo", "dev zero", "folder"):
        assert any(w in out.output for w in ("regular file", "directory")), out.output[-2000:]
    if "levels" in case:
        assert f"at most {MAX_LEVELS}" in out.output, out.output[-2000:]


def test_the_level_limit_is_inclusive(world: dict[str, Any], tmp_path: Path) -> None:
    """MAX_LEVELS levels are scored, in bounded time."""
    folder = sandbox(world, tmp_path)
    (folder / "m.quantiles.jsonl").rename(folder / "good.quantiles.jsonl")
    lines = _levels_line(folder, MAX_LEVELS - 3)
    assert len(json.loads(lines[0])) - 1 <= MAX_LEVELS
    (folder / "m.quantiles.jsonl").write_text("\n".join(lines) + "\n")
    with within(120, "MAX_LEVELS levels"):
        out = invoke(["eval", "m.jsonl", "--dataset", "ds", "--resamples", "3", "--json"], folder)
    check(out, "max levels")
    assert out.code == 0, out.output[-2000:]


@pytest.mark.slow
def test_a_sidecar_line_of_200_mb_is_refused_within_memory(
    world: dict[str, Any], tmp_path: Path
) -> None:
    folder = sandbox(world, tmp_path)
    with open(folder / "m.quantiles.jsonl", "wb") as fh:
        fh.write(b'{"id": "')
        for _ in range(200):
            fh.write(b"a" * 2**20)
    out = run_limited(
        ["eval", "m.jsonl", "--dataset", "ds", "--resamples", "3"], folder, memory_mb=2048
    )
    check(out, "200 MB line")
    assert out.code == 2 and "line 1" in out.output, out.output[-2000:]


def test_central_intervals_are_linear_in_the_levels() -> None:
    """99,998 levels (p0.001 to p99.999): paired in well under a second (pairing every level
    with every other was quadratic: 10,003 levels took minutes)."""
    percents = tuple(round(i / 1000, 3) for i in range(1, 100_000) if i != 50_000)
    levels = QuantileLevels(percents)
    started = time.monotonic()
    with within(20, "central"):
        pairs = levels.central
        names = [levels.interval_name(p) for p in pairs]
    assert len(pairs) == 49_999 and names[0] == "p0.001-p99.999"
    assert time.monotonic() - started < 5


# ------------------------------------------------ --vs with different levels


def test_vs_compares_pinball_losses_over_common_levels(
    world: dict[str, Any], tmp_path: Path
) -> None:
    folder = sandbox(world, tmp_path)
    (folder / "good.quantiles.jsonl").write_text((folder / "m.quantiles.jsonl").read_text())
    a_levels = ("p10", "p50", "p90", "p99")
    b_levels = ("p5", "p10", "p25", "p50", "p75", "p90")
    (folder / "b.jsonl").write_text((folder / "m.jsonl").read_text())
    (folder / "b.meta.json").write_text((folder / "m.meta.json").read_text())
    rows = []
    for line in _lines(folder):
        doc = json.loads(line)
        mid = doc["duration_s_p50"]
        rows.append(
            {"id": doc["id"], **{f"duration_s_{n}": mid * float(n[1:]) / 50 for n in b_levels}}
        )
    (folder / "b.quantiles.jsonl").write_text("\n".join(map(json.dumps, rows)) + "\n")
    assert set(json.loads(_lines(folder)[0])) >= {f"duration_s_{n}" for n in a_levels}
    out = invoke(
        ["eval", "m.jsonl", "--vs", "b.jsonl", "--dataset", "ds", "--resamples", "5", "--json"],
        folder,
    )
    check(out, "vs")
    assert out.code == 0, out.output[-2000:]
    result, _ = json.JSONDecoder().raw_decode(out.output[out.output.index("{") :])
    common = ("p10", "p50", "p90")
    a = result["intervals"]["metrics"]["duration_s"]["levels"]
    b = result["comparison"]["intervals"]["metrics"]["duration_s"]["levels"]
    want = (
        sum(a[n]["pinball"]["value"] for n in common) / 3
        - sum(b[n]["pinball"]["value"] for n in common) / 3
    )
    got = result["comparison"]["intervals_difference"]["duration_s"]["mean_pinball"]["value"]
    assert got == pytest.approx(want, rel=1e-9, abs=1e-12)
    assert result["comparison"]["intervals_levels_compared"] == list(common)
    assert any("different levels" in w for w in result["warnings"]), result["warnings"]


# ------------------------------------------- the hostile-input page names real options

DOC = ROOT / "docs/maintainer/hostile-input.md"


def _commands() -> dict[str, click.Command]:
    found: dict[str, click.Command] = {}

    def walk(group: click.Group, prefix: str) -> None:
        for name, cmd in group.commands.items():
            full = f"{prefix} {name}".strip()
            found[full] = cmd
            if isinstance(cmd, click.Group):
                walk(cmd, full)

    walk(cli, "")
    return found


def _options(cmd: click.Command) -> set[str]:
    return {
        o for p in cmd.params if isinstance(p, click.Option) for o in (*p.opts, *p.secondary_opts)
    }


def _claims(text: str) -> list[tuple[str | None, str]]:
    """(command or None, option) for every option the page names: `eval --out` names it for
    eval; a bare `--since` for some command, and for each command a sentence names by itself
    (`download`, ...), since "`--endpoint` is refused by `download` and `validate`" claims
    both have it."""
    commands = _commands()
    claims: list[tuple[str | None, str]] = []
    for sentence in re.split(r"(?<=[.;:])\s|\n\s*-\s", text):
        bare: list[str] = []
        named: list[str] = []
        for span in re.findall(r"`([^`]+)`", sentence):
            words = span.removeprefix("gharuntime ").split()
            command = next(
                (" ".join(words[:n]) for n in (2, 1) if " ".join(words[:n]) in commands), None
            )
            options = re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", span)
            if command is not None and span.removeprefix("gharuntime ") == command:
                named.append(command)
            elif command is not None:
                claims += [(command, o) for o in options]
            elif span.startswith("--"):
                bare += options
        claims += [(None, o) for o in bare]
        claims += [(c, o) for c in named for o in bare]
    return claims


def test_every_option_the_hostile_input_page_names_exists() -> None:
    commands = _commands()
    every = set().union(*(_options(c) for c in commands.values()))
    claims = _claims(DOC.read_text(encoding="utf-8"))
    assert len(claims) > 10
    wrong = [
        (command, option)
        for command, option in claims
        if option not in (_options(commands[command]) if command else every)
    ]
    assert not wrong, wrong


def test_the_check_catches_an_option_on_the_wrong_command() -> None:
    assert _claims("`validate --endpoint` and `--nope`") == [
        ("validate", "--endpoint"),
        (None, "--nope"),
    ]
    assert ("validate", "--endpoint") in _claims("`--endpoint` is refused by `validate` alike.")
    assert "--endpoint" not in _options(_commands()["validate"])
