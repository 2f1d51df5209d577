"""What the Markdown and the page show: tables in reading order, one row per method, with the
numbers formatted once, and the sentences that say what each table measures."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Final

from gharuntime.eval.metrics import HEADLINE_METRICS, INTERVAL_METRIC_BY_NAME, METRIC_BY_NAME
from gharuntime.eval.report import HEADLINE_INTERVAL, SUMMARY_METRICS
from gharuntime.leaderboard.rank import RANK_TARGET, Ranked, rank_table
from gharuntime.leaderboard.registry import Entry, Table

__all__ = [
    "COLUMNS",
    "DRAWN_WITHOUT_VALIDATION",
    "INTERVAL_COLUMNS",
    "METRIC_COLUMNS",
    "SAMPLED_AS_DRAWN",
    "SUMMARY_COLUMNS",
    "Reproduced",
    "TableView",
    "fmt_count",
    "fmt_metric",
    "metric_label",
    "moved",
    "recency_coverage",
    "table_order",
    "table_targets",
    "table_views",
    "transfer_label",
    "uncalibrated",
]

METRIC_COLUMNS: Final = tuple(
    (m.name, f"{m.label} (s)" if m.kind == "target" else m.label, m.higher_is_better)
    for m in HEADLINE_METRICS
)
"""(metric, label, higher is better) in column order: the registry's headline metrics, on
duration_s (so a target-unit metric is in seconds)."""

INTERVAL_COLUMNS: Final = tuple(
    (m.name, f"{HEADLINE_INTERVAL} {m.label}", m.higher_is_better)
    for m in (INTERVAL_METRIC_BY_NAME["coverage"], INTERVAL_METRIC_BY_NAME["log_width"])
)
"""(metric, label, higher is better) of the quantile sidecar's columns: coverage (nominal 80%)
and mean log width of the P10–P90 interval, on duration_s; — for a method without one."""

SUMMARY_COLUMNS: Final = tuple(
    (f"summary_{m}", f"mean {METRIC_BY_NAME[m].label}", METRIC_BY_NAME[m].higher_is_better)
    for m in SUMMARY_METRICS
)
"""(column, label, higher is better) of a multi table's summary: each metric's mean over the
targets the dataset holds (gharuntime.eval.report.SUMMARY_MEANING); RMSLE's ranks the table."""

_UNITS: Final = {"duration_s": "s", "queue_s": "s", "log_bytes": "B"}


def metric_label(label: str, target: str) -> str:
    """A METRIC_COLUMNS label for `target`: its unit in place of seconds (`MAE (B)`)."""
    unit = _UNITS.get(target, "")
    return label.replace("(s)", f"({unit})" if unit else "").rstrip()


COLUMNS: Final = (
    "group",
    "method",
    "version",
    "track",
    "trained_on",
    "target",
    *(m for m, _, _ in SUMMARY_COLUMNS),
    *(m for m, _, _ in METRIC_COLUMNS),
    *(m for m, _, _ in INTERVAL_COLUMNS),
    "records",
    "repositories",
    "fit_s_per_1k",
    "predict_s_per_1k",
    "revision",
    "synthetic",
)

_HEADLINE: Final = {
    ("cross_repo", "config"): (
        0,
        "jobs of repositories never seen in training: what `gharuntime predict` serves",
    ),
    ("temporal", "history"): (1, "known jobs, with their earlier durations"),
    ("temporal", "config"): (
        2,
        "each repository's latest runs: a job's identity (repository, workflow, job name) is "
        "an input, and where its group is in training a per-group median is a lookup",
    ),
    ("cross_repo", "history"): (3, "repositories never seen in training, with job history"),
}


_TRANSFER_AFTER: Final = 10
"""Transfer tables come after every plain table, in the same headline order among themselves."""


def table_order(table: Table) -> tuple[int, str, str, str, str]:
    """Headline tables first (cross_repo/config, temporal/history, then temporal/config), then
    the transfer tables (methods trained on another dataset) in the same order."""
    rank, _ = _HEADLINE.get((table.config, table.track), (9, ""))
    if table.trained_on:
        rank += _TRANSFER_AFTER
    return (rank, table.dataset, table.trained_on, table.config, table.track)


def fmt_count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def _data_kind(synthetic: bool | None, source_kind: str | None) -> str:
    """How the data of a dataset block is named in a sentence ("" when it does not say)."""
    if synthetic is True:
        return "the simulated world" if source_kind == "simulated" else "synthetic data"
    if synthetic is False:
        return "real jobs of"
    return ""


def _transfer_note(first: dict[str, Any], trained_on: str, dataset: str) -> str:
    t, d = first["trained_on"], first["dataset"]
    what = _data_kind(t.get("synthetic"), t.get("source_kind"))
    scored = {True: "synthetic jobs of", False: "real jobs of"}.get(d["synthetic"], "jobs of")
    repos = t.get("repositories")
    of = f" of {fmt_count(int(repos), 'repository', 'repositories')}" if repos else ""
    return (
        f"transfer: every method was trained on {what + ' ' if what else ''}{trained_on} "
        f"(its {t['config']} {t['split']} split, {t['rows']:,} records{of}, revision "
        f"`{_plain(str(t['revision'])[:16])}`), scored on {scored} {dataset} (its {d['config']} "
        f"{d['split']} split)"
    )


def transfer_label(entry: Entry) -> str:
    """What a transfer result's row is, said on the row itself: 'trained on gharuntime-sim-small
    temporal/train (simulated), scored on gharuntime-real-apache temporal/test (real)'; "" for
    a result trained on its own dataset's train split."""
    t = entry.result.get("trained_on")
    if not isinstance(t, dict) or not entry.trained_on:
        return ""
    d = entry.result["dataset"]

    def kind(block: dict[str, Any]) -> str:
        if block.get("synthetic") is True:
            return " (simulated)" if block.get("source_kind") == "simulated" else " (synthetic)"
        return " (real)" if block.get("synthetic") is False else ""

    return (
        f"trained on {entry.trained_on} {t.get('config')}/{t.get('split')}{kind(t)}, "
        f"scored on {entry.dataset} {d['config']}/{d['split']}{kind(d)}"
    )


def _plain(text: str) -> str:
    """Text safe inside a Markdown code span: no backtick to end it, no break to split it."""
    return "".join("'" if ch == "`" else " " if ord(ch) < 0x20 else ch for ch in text)


def _group_seen(dataset: dict[str, Any]) -> str:
    """What the table tests, measured: the share of its rows whose job group is in training
    ("" for results made before eval recorded it)."""
    seen, rows = dataset.get("rows_group_in_train"), dataset.get("rows")
    if not isinstance(seen, int) or isinstance(seen, bool) or not isinstance(rows, int) or not rows:
        return ""
    return (
        f"measured: {100 * seen / rows:.1f}% of its {rows:,} rows ({seen:,}) belong to a job "
        "group (repository, workflow path, job name) the training split holds"
    )


def fmt_metric(metric: str, value: float | None) -> str:
    """`value` as `metric` shows it (a SUMMARY_COLUMNS key as its metric)."""
    metric = metric.removeprefix("summary_")
    spec = METRIC_BY_NAME.get(metric) or INTERVAL_METRIC_BY_NAME[metric]
    return spec.format(value)


def _timing(extra: dict[str, Any], key: str) -> float | None:
    timing = extra.get("timing")
    value = timing.get(key) if isinstance(timing, dict) else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _provenance(result: dict[str, Any]) -> str:
    version = str(result.get("gharuntime_version", "?"))
    prov = result.get("provenance")
    if isinstance(prov, dict):
        version = str(prov.get("gharuntime_version") or version)
        commit = prov.get("git_commit")
        if isinstance(commit, str) and commit:
            dirty = "+dirty" if prov.get("git_dirty") else ""
            return f"{version} @ {commit[:10]}{dirty}"
    return version


def _headline_interval(result: dict[str, Any], target: str) -> dict[str, Any]:
    """The P10–P90 block of the result's quantile sidecar on `target` ({} without one)."""
    intervals = result.get("intervals") or {}
    block = (intervals.get("metrics") or {}).get(target) or {}
    return dict((block.get("central") or {}).get(HEADLINE_INTERVAL) or {})


def _calibration(result: dict[str, Any], target: str) -> list[tuple[float, float]]:
    """(nominal, observed) share at or below each level of the sidecar, on `target`."""
    intervals = result.get("intervals") or {}
    block = (intervals.get("metrics") or {}).get(target) or {}
    out = []
    for level in (block.get("levels") or {}).values():
        observed = (level.get("calibration") or {}).get("value")
        if observed is not None:
            out.append((float(level["nominal"]), float(observed)))
    return out


SAMPLED_AS_DRAWN: Final = (
    "the P10 and P90 of the model's own draws, as drawn: the result was made before LASER "
    "calibrated its ranges on the validation split and records no calibration (gharuntime "
    "laser calibrate calibrates a kept model; else rerun gharuntime baseline laser)"
)
"""Why a sampling method's ranges that record no calibration at all are not calibrated."""

DRAWN_WITHOUT_VALIDATION: Final = (
    "no validation split (as in cross_repo): the P10 and P90 of the model's own draws, as "
    "drawn; its training found no validation job to stop or calibrate on, so rerunning it with "
    "today's calibration would leave them as drawn too"
)
"""Why a sampling method's ranges recording no calibration, fitted where the split had no
validation jobs, are not calibrated: not a matter of when it was made."""


def _found_no_validation(extra: Any) -> bool:
    """Whether a LASER fit asked to validate (`validate_every` above 0) recorded no validation
    rows: its dataset config had no validation job with the target (cross_repo)."""
    config = extra.get("method_config") if isinstance(extra, dict) else None
    training = config.get("training") if isinstance(config, dict) else None
    every = config.get("validate_every") if isinstance(config, dict) else None
    asked = isinstance(every, int) and not isinstance(every, bool) and every > 0
    return asked and isinstance(training, dict) and "validation_rows" not in training


def _sampled(extra: Any) -> bool:
    """Whether the method drew several samples per job (LASER's `samples` above 1)."""
    config = extra.get("method_config") if isinstance(extra, dict) else None
    samples = config.get("samples") if isinstance(config, dict) else None
    return isinstance(samples, int) and not isinstance(samples, bool) and samples > 1


def uncalibrated(result: dict[str, Any], target: str = RANK_TARGET) -> str:
    """Why the result's ranges on `target` were not calibrated on held-out jobs, from the
    calibration its method recorded (`Method.calibration`, per target), or for a sampling
    method's result that records none DRAWN_WITHOUT_VALIDATION (its fit found no validation
    job) or SAMPLED_AS_DRAWN; "" when they were, or when the result
    does not say."""
    extra = (result.get("meta") or {}).get("extra") or {}
    record = extra.get("calibration") if isinstance(extra, dict) else None
    block = record.get(target) if isinstance(record, dict) else None
    if record is None and result.get("intervals") and _sampled(extra):
        return DRAWN_WITHOUT_VALIDATION if _found_no_validation(extra) else SAMPLED_AS_DRAWN
    if not isinstance(block, dict) or not result.get("intervals"):
        return ""
    if block.get("method") == "none":
        why = block.get("why")
        return str(why)[:300] if isinstance(why, str) and why else "not calibrated"
    if block.get("source") == "training":
        return (
            "no validation split (as in cross_repo), so the ranges come from the training "
            "residuals, not from held-out jobs"
        )
    return ""


MOVED_BAND: Final = (0.70, 0.90)
"""The share of a scored split's values inside the validation split's own P10–P90 (80% when
nothing moved) outside which the leaderboard says the target moved (gharuntime.eval.shift)."""


def _seconds_or_bytes(value: float, target: str) -> str:
    unit = _UNITS.get(target, "")
    return f"{value:,.0f} {unit}".rstrip() if abs(value) >= 10 else f"{value:.3g} {unit}".rstrip()


def _number(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
    return float(value) if ok else None


def moved(result: dict[str, Any], target: str = RANK_TARGET) -> str:
    """Why no range calibrated on the validation split can be expected to hold 80% of the
    scored jobs on `target`: the target itself moved between the two splits (the result's
    `dataset.split_shift`, gharuntime.eval.shift), said in a sentence; "" when its share
    inside the validation split's P10–P90 is within MOVED_BAND, or the result does not say."""
    shift = ((result.get("dataset") or {}).get("split_shift") or {}).get(target)
    if not isinstance(shift, dict):
        return ""
    inside, below, above = (_share(shift.get(k)) for k in ("inside", "below", "above"))
    low, high = _number(shift.get("p10")), _number(shift.get("p90"))
    ref = str(shift.get("reference_split") or "validation")
    split = str((result.get("dataset") or {}).get("split") or "scored")
    if inside is None or below is None or above is None or low is None or high is None:
        return ""
    if MOVED_BAND[0] <= inside <= MOVED_BAND[1]:
        return ""
    return (
        f"{target} moved between the {ref} and {split} splits: the {ref} split's own "
        f"P10–P90 ({_seconds_or_bytes(low, target)} to "
        f"{_seconds_or_bytes(high, target)}) holds {100 * inside:.1f}% of the {split} "
        f"jobs ({100 * below:.1f}% below it, {100 * above:.1f}% above; 80% when nothing "
        f"moves), so ranges calibrated on {ref} jobs are not expected to hold 80% here"
    )


def _share(value: Any) -> float | None:
    """A coverage read from a result: a number in [0, 1], else None."""
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if ok and 0.0 <= value <= 1.0 else None


def recency_coverage(
    result: dict[str, Any], target: str = RANK_TARGET
) -> dict[str, tuple[float | None, int]]:
    """(P10-P90 coverage, rows) of each train_recency group of the result (eval's breakdown
    by how recently the job group last ran in training), on `target`; {} without one."""
    breakdowns = (result.get("breakdowns") or {}).get(target) or {}
    groups = breakdowns.get("train_recency") if isinstance(breakdowns, dict) else None
    out: dict[str, tuple[float | None, int]] = {}
    for bucket, entry in groups.items() if isinstance(groups, dict) else ():
        if not isinstance(entry, dict):
            continue
        block = ((entry.get("intervals") or {}).get(HEADLINE_INTERVAL) or {}).get("coverage")
        rows = entry.get("rows")
        count = rows if isinstance(rows, int) and not isinstance(rows, bool) else 0
        out[str(bucket)] = (_share(block.get("value")) if isinstance(block, dict) else None, count)
    return out


def _row(r: Ranked, target: str = RANK_TARGET) -> dict[str, Any]:
    """One method's row of a table on `target` (with the multi summary where it has one)."""
    res = r.entry.result
    metrics = res["metrics"][target]
    extra = res["meta"].get("extra") or {}
    row: dict[str, Any] = {
        "dataset": r.entry.dataset,
        "config": r.entry.config,
        "track": r.entry.track,
        "trained_on": r.entry.trained_on or r.entry.dataset,
        "transfer": transfer_label(r.entry),
        "group": r.group,
        "method": r.entry.method,
        "version": res["meta"].get("method_version") or "",
        "target": target,
        "records": int(res["counts"]["scored"][target]),
        "repositories": int(res["dataset"]["repositories"]),
        "missing": int(res["submission"]["missing"]),
        "fit_s_per_1k": _timing(extra, "fit_seconds_per_1000_jobs"),
        "predict_s_per_1k": _timing(extra, "predict_seconds_per_1000_jobs"),
        "revision": res["dataset"]["revision"],
        "synthetic": res["dataset"]["synthetic"],
        "gharuntime": _provenance(res),
        "vs_leader": list(r.vs_leader) if r.vs_leader else None,
    }
    for metric, _, _ in METRIC_COLUMNS:
        block = metrics[metric]
        row[metric] = block["value"]
        row[f"{metric}_low"] = block["ci_low"]
        row[f"{metric}_high"] = block["ci_high"]
    central = _headline_interval(res, target)
    summary = (res.get("summary") or {}).get("metrics") or {}
    for key, block in (
        *((m, central.get(m) or {}) for m, _, _ in INTERVAL_COLUMNS),
        *((m, summary.get(m.removeprefix("summary_")) or {}) for m, _, _ in SUMMARY_COLUMNS),
    ):
        row[key] = block.get("value")
        row[f"{key}_low"] = block.get("ci_low")
        row[f"{key}_high"] = block.get("ci_high")
    row["calibration"] = _calibration(res, target)
    row["uncalibrated"] = uncalibrated(res, target)
    row["moved"] = moved(res, target)
    row["recency_coverage"] = recency_coverage(res, target)
    return row


def table_targets(table: Table) -> tuple[tuple[str, ...], dict[str, str]]:
    """The targets a table shows (those its first result scored: on multi, those the dataset
    holds; the registry checks every result scored the same), and those left out, with why."""
    first = table.entries[0].result if table.entries else {}
    targets = first.get("targets") or {}
    scored = (
        tuple(targets.get("scored") or ()) or tuple(first.get("metrics") or ()) or (RANK_TARGET,)
    )
    return scored, {str(k): str(v) for k, v in (targets.get("left_out") or {}).items()}


@dataclass(frozen=True)
class Reproduced:
    """A `leaderboard reproduce --all` table beside the results: its scope (a dataset, or every
    dataset), the link to its Markdown, and the plain results filed in its scope now, counted
    by what the table says of their current text: reproduced exactly, within tolerance, not
    (differs), not run, refused; `changed`: replaced or added since the table was made, so
    the table vouches for nothing about them."""

    scope: str
    link: str
    exact: int
    within: int
    differs: int
    not_run: int
    version: str
    refused: int = 0
    changed: int = 0

    @property
    def summary(self) -> str:
        """'12 of 14 reproduced (11 exactly, 1 within the method's tolerance), 1 not, 1 not
        run (dataset not at hand), by gharuntime 0.1.0'."""
        total = self.exact + self.within + self.differs + self.not_run + self.refused + self.changed
        text = (
            f"{self.exact + self.within} of {total} reproduced ({self.exact} exactly, "
            f"{self.within} within the method's tolerance)"
        )
        if self.differs:
            text += f", {self.differs} not"
        if self.not_run:
            text += f", {self.not_run} not run (dataset not at hand)"
        if self.refused:
            text += f", {self.refused} refused"
        if self.changed:
            text += f", {self.changed} changed or added since (not re-run)"
        return text + f", by gharuntime {self.version}"


@dataclass(frozen=True)
class TableView:
    """One (dataset, config, track) table, or one transfer table, ranked."""

    table: Table
    ranked: list[Ranked]
    rows: list[dict[str, Any]]  # on duration_s, with the multi summary where there is one
    targets: tuple[str, ...] = (RANK_TARGET,)
    target_rows: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # every target's
    left_out: dict[str, str] = field(default_factory=dict)  # target -> why it is not scored

    @property
    def multi(self) -> bool:
        """A table of several targets: a summary table, then one table per target."""
        return self.table.track == "multi"

    @property
    def key(self) -> str:
        return self.table.name

    @property
    def title(self) -> str:
        """`dataset · config / track`, and `· trained on X` for a transfer table."""
        t = self.table
        return f"{t.dataset} · {t.config} / {t.track}" + (
            f" · trained on {t.trained_on}" if t.trained_on else ""
        )

    @property
    def note(self) -> str:
        if self.table.trained_on:
            return _transfer_note(self.first, self.table.trained_on, self.table.dataset)
        note = _HEADLINE.get((self.table.config, self.table.track), (9, ""))[1]
        seen = _group_seen(self.first["dataset"])
        return f"{note}; {seen}" if note and seen else note or seen

    @property
    def intervals(self) -> str:
        """How the table's intervals were made: which clusters the bootstrap resampled."""
        b = self.first["bootstrap"]
        head = f"{int(100 * b['confidence'])}% intervals from {b['resamples']:,}"
        if b.get("cluster") == "run_id":
            return (
                f"{head} resamples of {fmt_count(int(b['clusters']), 'workflow run', 'workflow runs')} "
                f"(seed {b['seed']}; too few repositories to resample, so runs are resampled)"
            )
        return f"{head} repository resamples (seed {b['seed']})"

    @property
    def first(self) -> dict[str, Any]:
        return self.table.entries[0].result

    @property
    def warnings(self) -> list[str]:
        out: list[str] = []
        for e in self.table.entries:
            for w in e.result.get("warnings") or []:
                if str(w) not in out:
                    out.append(str(w))
        return out


def table_views(tables: list[Table]) -> list[TableView]:
    """Every table, ranked, in reading order."""
    views = []
    for table in sorted(tables, key=table_order):
        ranked = rank_table(table)
        targets, left_out = table_targets(table)
        per_target = {t: [_row(r, t) for r in ranked] for t in targets}
        rows = per_target.get(RANK_TARGET) or [_row(r, targets[0]) for r in ranked]
        views.append(TableView(table, ranked, rows, targets, per_target, left_out))
    return views
