"""Features from a job's semi-structured configuration: the one feature module LightGBM and
XGBoost share, and `gharuntime predict` reuses for a workflow that never ran.

The job's own YAML comes from `workflow_yaml` + `job_key` (parsed with gharuntime.workflow) or,
when the workflow is absent, from `job_yaml`. YAML is parsed once per distinct (workflow, job) and
its features gathered per row, so millions of rows cost one parse per distinct job.

Dense features (one column each, NaN when unknown) plus hashed bags (stable crc32 buckets):
`uses:` actions without their ref, shell command tokens of `run:` steps, runner labels, and
matrix `key=value` pairs. Categorical inputs with few values (event, repository language) are
one-hot over the training set's most frequent values. History statistics appear only when the
frame handed over holds `history_duration_s`, which only a history track allows.

Queue-time features (`FeatureSpec.queue`, on where a model predicts `queue_s`: the multi
track) say what a job meets when it is queued, all known at its creation: the hour of the week,
the runner kind its labels ask for (self-hosted, a larger hosted runner, a standard hosted one,
another label), and the jobs of its repository and organisation queued or running at that
moment, counted from earlier-created jobs only (gharuntime.baselines.queue_load).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import zlib
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import scipy.sparse as sp

from gharuntime.baselines.queue_load import LOAD_FEATURES, LOAD_INPUTS, JobEvents, load_counts
from gharuntime.contract import HISTORY_COLUMN
from gharuntime.parquet import read_parquet
from gharuntime.progress import Progress, say
from gharuntime.workflow import (
    JobSpec,
    MatrixTooLarge,
    Workflow,
    WorkflowError,
    expand_matrix,
    parse_workflow,
)

__all__ = [
    "CONFIG_FEATURE_INPUTS",
    "ENCODING_INPUTS",
    "ENCODING_LEVELS",
    "QUEUE_DENSE",
    "RUNNER_KINDS",
    "FeatureSpec",
    "Features",
    "TargetEncoder",
    "extract",
    "feature_inputs",
    "fit_spec",
    "job_spec_of",
    "runner_kind",
]

CONFIG_FEATURE_INPUTS: tuple[str, ...] = (
    "repo_language",
    "repo_stars",
    "repo_size_kb",
    "repo_fork",
    "repo_created_at",
    "run_attempt",
    "event",
    "is_default_branch",
    "workflow_yaml",
    "job_key",
    "job_yaml",
    "matrix",
    "runner_labels",
    "runner_os",
    "needs",
    "step_names",
    "created_at",
)
"""The input columns the feature extractor reads on every track."""

OSES = ("Linux", "Windows", "macOS")

_JOB_DENSE = (
    "job_resolved",
    "steps",
    "steps_uses",
    "steps_run",
    "run_lines",
    "run_chars_log",
    "timeout_minutes",
    "services",
    "has_container",
    "has_if",
    "continue_on_error",
    "reusable_call",
    "matrix_combinations",
    "matrix_dims",
    "max_parallel",
    "fail_fast",
    "workflow_jobs",
    "workflow_events",
    "workflow_yaml_bytes_log",
    "job_yaml_bytes_log",
    "steps_with_if",
)
_HISTORY_DENSE = (
    "hist_n",
    "hist_last",
    "hist_mean",
    "hist_median",
    "hist_min",
    "hist_max",
    "hist_std",
)


RUNNER_KINDS = ("self-hosted", "larger", "hosted", "other")
"""What a job's runs-on labels ask for, one-hot (all 0 without labels): a self-hosted runner, a
larger GitHub-hosted one (cores, GPU, large/xlarge), a standard hosted image, another label."""
QUEUE_DENSE = ("hour_of_week", *(f"runner={k}" for k in RUNNER_KINDS), *LOAD_FEATURES)

_LARGER = re.compile(r"\d+-?cores?\b|\bgpu\b|\d+vcpu|\bx?large\b")
_HOSTED = re.compile(r"^(?:ubuntu|windows|macos)-(?:latest|\d[\d.]*)(?:-arm)?$")


def runner_kind(labels: list[str] | None) -> str | None:
    """The kind of runner `labels` ask for (RUNNER_KINDS), None without labels."""
    low = [label.lower() for label in labels or [] if isinstance(label, str)]
    if not low:
        return None
    if "self-hosted" in low:
        return "self-hosted"
    if any(_LARGER.search(label) for label in low):
        return "larger"
    if any(_HOSTED.match(label) for label in low):
        return "hosted"
    return "other"


def feature_inputs(uses_history: bool, queue: bool = False) -> tuple[str, ...]:
    """The columns the extractor reads, with history only when the track allows it, and the
    columns the queue counts are looked up by with `queue`."""
    base = (*CONFIG_FEATURE_INPUTS, HISTORY_COLUMN) if uses_history else CONFIG_FEATURE_INPUTS
    if queue:
        base = (*base, *(c for c in LOAD_INPUTS if c not in base))
    return base


@dataclass(frozen=True)
class FeatureSpec:
    """Everything the extractor learned from training data (saved with a model)."""

    uses_history: bool
    events: tuple[str, ...]
    languages: tuple[str, ...]
    uses_buckets: int = 64
    shell_buckets: int = 128
    label_buckets: int = 16
    matrix_buckets: int = 32
    bucket_tokens: dict[str, str] = field(default_factory=dict)  # "sh#12" → most common token
    queue: bool = False  # the queue-time features (QUEUE_DENSE); False in specs saved before

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FeatureSpec:
        d = dict(data)
        d["events"] = tuple(d["events"])
        d["languages"] = tuple(d["languages"])
        return cls(**d)

    def dense_names(self) -> list[str]:
        names = [
            *(f"os={o}" for o in (*OSES, "unknown")),
            "labels",
            "self_hosted",
            *(f"event={e}" for e in (*self.events, "other")),
            "default_branch",
            "run_attempt",
            *(f"language={lang}" for lang in (*self.languages, "other")),
            "repo_stars_log",
            "repo_size_log",
            "repo_fork",
            "repo_age_days",
            "step_names",
            "needs",
            "hour",
            "weekday",
            "matrix_width",
            *_JOB_DENSE,
        ]
        if self.uses_history:
            names.extend(_HISTORY_DENSE)
        if self.queue:
            names.extend(QUEUE_DENSE)
        return names

    def bag_names(self) -> list[str]:
        out: list[str] = []
        for prefix, n in self._bags():
            out.extend(f"{prefix}#{i}" for i in range(n))
        return out

    def names(self) -> list[str]:
        return self.dense_names() + self.bag_names()

    def readable(self, name: str) -> str:
        """A hashed bucket's name with its most common training token, e.g. `uses#3(actions/checkout)`."""
        token = self.bucket_tokens.get(name)
        return f"{name}({token})" if token else name

    def _bags(self) -> tuple[tuple[str, int], ...]:
        return (
            ("uses", self.uses_buckets),
            ("sh", self.shell_buckets),
            ("label", self.label_buckets),
            ("matrix", self.matrix_buckets),
        )


@dataclass
class Features:
    """A feature matrix (CSR, float32, NaN = unknown) and its column names."""

    matrix: sp.csr_matrix
    names: list[str]


def _bucket(prefix: str, token: str, n: int) -> int:
    return zlib.crc32(f"{prefix}:{token}".encode()) % n


_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_.+/-]*")


def shell_tokens(script: str) -> list[str]:
    """Command words of a `run:` script, lower-cased: `pip install -e .` → pip, install, -e."""
    return [t.lower() for t in _TOKEN.findall(script) if len(t) < 40]


def _action(uses: str) -> str:
    return uses.split("@", 1)[0].lower()


def _wrap_job_yaml(job_yaml: str) -> str:
    body = "\n".join("  " + line for line in job_yaml.splitlines())
    return f"on: push\njobs:\n{body}\n"


def job_spec_of(
    workflow_yaml: str | None,
    job_key: str | None,
    job_yaml: str | None,
    cache: dict[str, Workflow | None] | None = None,
) -> tuple[JobSpec | None, Workflow | None]:
    """The job's JobSpec (and its workflow), from the workflow file or else the job's own block."""
    cache = {} if cache is None else cache

    def parsed(text: str) -> Workflow | None:
        if text not in cache:
            try:
                cache[text] = parse_workflow(text)
            except WorkflowError:
                cache[text] = None
        return cache[text]

    wf = parsed(workflow_yaml) if workflow_yaml else None
    if wf is not None:
        if job_key is not None and job_key in wf.jobs:
            return wf.jobs[job_key], wf
        if job_key is None and len(wf.jobs) == 1:
            return next(iter(wf.jobs.values())), wf
    if job_yaml:
        block = parsed(_wrap_job_yaml(job_yaml))
        if block is not None and len(block.jobs) == 1:
            return next(iter(block.jobs.values())), wf
    return None, wf


def _num(value: Any) -> float:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    return math.nan


def _job_features(
    spec: JobSpec | None, wf: Workflow | None, job_yaml: str | None
) -> tuple[list[float], dict[str, list[str]]]:
    """Dense job-level values and the tokens of the job's `uses` and `sh` bags."""
    nan = math.nan
    tokens: dict[str, list[str]] = {"uses": [], "sh": []}
    wf_dense = [
        float(len(wf.jobs)) if wf else nan,
        float(len(wf.events)) if wf else nan,
        math.log1p(len(wf.text.encode())) if wf else nan,
    ]
    job_bytes = math.log1p(len((spec.yaml_block if spec else job_yaml or "").encode()))
    if spec is None:
        dense = [0.0] + [nan] * 15 + wf_dense + [job_bytes if job_yaml else nan, nan]
        return dense, tokens
    n_uses = n_run = run_lines = run_chars = with_if = 0
    for step in spec.steps:
        if "if" in step:
            with_if += 1
        uses = step.get("uses")
        if isinstance(uses, str):
            n_uses += 1
            a = _action(uses)
            tokens["uses"].append(a)
        run = step.get("run")
        if isinstance(run, str):
            n_run += 1
            run_lines += len([x for x in run.splitlines() if x.strip()])
            run_chars += len(run)
            tokens["sh"].extend(shell_tokens(run))
    strategy = spec.raw.get("strategy")
    strategy = strategy if isinstance(strategy, dict) else {}
    try:
        combos = expand_matrix(spec.matrix)
    except MatrixTooLarge:  # a stored workflow over the limits: its size is unknown, not built
        combos = None
    dims = (
        float(len([k for k in spec.matrix if k not in ("include", "exclude")]))
        if isinstance(spec.matrix, dict)
        else (0.0 if spec.matrix is None else nan)
    )
    dense = [
        1.0,
        float(len(spec.steps)),
        float(n_uses),
        float(n_run),
        float(run_lines),
        math.log1p(run_chars),
        _num(spec.timeout_minutes),
        float(len(spec.services)),
        float(spec.container is not None),
        float(spec.condition is not None),
        _num(spec.continue_on_error),
        float(spec.uses is not None),
        float(len(combos)) if combos is not None else nan,
        dims,
        _num(strategy.get("max-parallel")),
        _num(strategy.get("fail-fast")),
        *wf_dense,
        job_bytes,
        float(with_if),
    ]
    return dense, tokens


_JOB_CACHE: OrderedDict[tuple[bytes, str | None, bytes], tuple[list[float], dict[str, list[str]]]]
_JOB_CACHE = OrderedDict()
_JOB_CACHE_SIZE = 200_000


def _digest(text: str | None) -> bytes:
    return hashlib.sha1(text.encode(), usedforsecurity=False).digest() if text else b""


def _cached_job_features(
    wf_text: str | None, key: str | None, block: str | None, cache: dict[str, Workflow | None]
) -> tuple[list[float], dict[str, list[str]]]:
    """Job-level features, remembered across calls: fitting, validation, test and predict parse
    each distinct job once per process (YAML parsing is most of the extractor's time)."""
    ident = (_digest(wf_text), key, _digest(block))
    hit = _JOB_CACHE.get(ident)
    if hit is not None:
        _JOB_CACHE.move_to_end(ident)
        return hit
    jspec, wf = job_spec_of(wf_text, key, block, cache)
    value = _job_features(jspec, wf, block)
    _JOB_CACHE[ident] = value
    if len(_JOB_CACHE) > _JOB_CACHE_SIZE:
        _JOB_CACHE.popitem(last=False)
    return value


def _distinct(frame: pl.DataFrame, exprs: list[pl.Expr]) -> tuple[np.ndarray, np.ndarray]:
    """(index of each row's distinct key, first row of each distinct key)."""
    keys = frame.select([e.alias(f"k{i}") for i, e in enumerate(exprs)]).with_row_index("i")
    cols = [f"k{i}" for i in range(len(exprs))]
    firsts = keys.group_by(cols, maintain_order=True).agg(pl.col("i").first()).with_row_index("j")
    joined = keys.join(
        firsts.drop("i"), on=cols, how="left", nulls_equal=True, maintain_order="left"
    )
    return joined["j"].to_numpy(), firsts["i"].to_numpy()


def _top(values: pl.Series, k: int) -> tuple[str, ...]:
    counts = values.drop_nulls().value_counts(sort=True)
    ordered = counts.sort(["count", values.name], descending=[True, False])
    return tuple(str(v) for v in ordered[values.name].head(k).to_list())


def fit_spec(train: pl.DataFrame, uses_history: bool, queue: bool = False) -> FeatureSpec:
    """The vocabularies (and bucket names) the extractor needs, learned from training rows."""
    spec = FeatureSpec(
        uses_history=uses_history,
        events=_top(train["event"], 8),
        languages=_top(train["repo_language"], 24),
        queue=queue,
    )
    extract(train, spec, bucket_tokens=spec.bucket_tokens)
    return spec


def _queue_dense(frame: pl.DataFrame, events: JobEvents | None) -> np.ndarray:
    """QUEUE_DENSE of every row: hour of the week, runner kind, the queue at creation."""
    created = pl.col("created_at")
    hour = frame.select(((created.dt.weekday() - 1) * 24 + created.dt.hour()).cast(pl.Float64))
    l_idx, l_first = _distinct(frame, [pl.col("runner_labels").list.join("\x1f")])
    kinds = [runner_kind(x) for x in frame["runner_labels"].gather(l_first).to_list()]
    one_hot = np.array([[float(k == kind) for kind in RUNNER_KINDS] for k in kinds])
    one_hot = one_hot.reshape(len(kinds), len(RUNNER_KINDS))
    return np.hstack(
        [
            hour.fill_null(math.nan).to_numpy().astype(np.float64).reshape(-1, 1),
            one_hot[l_idx] if frame.height else np.zeros((0, len(RUNNER_KINDS))),
            load_counts(frame.select(LOAD_INPUTS), events),
        ]
    )


def _history(frame: pl.DataFrame) -> np.ndarray:
    h = pl.col(HISTORY_COLUMN).list.eval(pl.element().log1p())
    stats = frame.select(
        pl.col(HISTORY_COLUMN).list.len().cast(pl.Float64).alias("n"),
        h.list.first().alias("last"),
        h.list.mean().alias("mean"),
        h.list.median().alias("median"),
        h.list.min().alias("min"),
        h.list.max().alias("max"),
        h.list.std().alias("std"),
    )
    return stats.cast(pl.Float64).fill_null(math.nan).to_numpy()


def _row_dense(frame: pl.DataFrame, spec: FeatureSpec) -> np.ndarray:
    os_col = pl.col("runner_os")
    exprs: list[pl.Expr] = [(os_col == o).fill_null(False) for o in OSES]
    exprs.append(os_col.is_null() | ~os_col.is_in(list(OSES)))
    labels = pl.col("runner_labels")
    exprs.append(labels.list.len().fill_null(0))
    exprs.append(labels.list.eval(pl.element().str.to_lowercase() == "self-hosted").list.any())
    ev = pl.col("event")
    exprs.extend((ev == e).fill_null(False) for e in spec.events)
    exprs.append(ev.is_null() | ~ev.is_in(list(spec.events)))
    exprs.append(pl.col("is_default_branch"))
    exprs.append(pl.col("run_attempt"))
    lang = pl.col("repo_language")
    exprs.extend((lang == x).fill_null(False) for x in spec.languages)
    exprs.append(lang.is_null() | ~lang.is_in(list(spec.languages)))
    exprs.append(pl.col("repo_stars").cast(pl.Float64).log1p())
    exprs.append(pl.col("repo_size_kb").cast(pl.Float64).log1p())
    exprs.append(pl.col("repo_fork"))
    exprs.append((pl.col("created_at") - pl.col("repo_created_at")).dt.total_hours() / 24.0)
    exprs.append(pl.col("step_names").list.len())
    exprs.append(pl.col("needs").list.len())
    exprs.append(pl.col("created_at").dt.hour())
    exprs.append(pl.col("created_at").dt.weekday())
    exprs.append(pl.lit(0.0))  # matrix_width: filled in by extract() from the parsed matrix
    out = frame.select([e.cast(pl.Float64).alias(f"f{i}") for i, e in enumerate(exprs)])
    return out.fill_null(math.nan).to_numpy().astype(np.float64)


def _matrix_items(text: str | None) -> list[str]:
    if not text:
        return []
    try:
        value = json.loads(text)
    except ValueError:
        return []
    if not isinstance(value, dict):
        return []
    return [f"{k}={json.dumps(v, sort_keys=True)}" for k, v in value.items()]


def _bag_matrix(
    rows: list[list[str]], prefix: str, n: int
) -> tuple[sp.csr_matrix, dict[int, list[str]]]:
    data: list[float] = []
    indices: list[int] = []
    indptr = [0]
    seen: dict[int, list[str]] = {}
    for toks in rows:
        counts: dict[int, float] = {}
        for t in toks:
            b = _bucket(prefix, t, n)
            counts[b] = counts.get(b, 0.0) + 1.0
            seen.setdefault(b, []).append(t)
        indices.extend(counts)
        data.extend(counts.values())
        indptr.append(len(indices))
    m = sp.csr_matrix((data, indices, indptr), shape=(len(rows), n), dtype=np.float32)
    return m, seen


def _name_buckets(prefix: str, seen: Mapping[int, list[str]], out: dict[str, str]) -> None:
    for b, toks in seen.items():
        counts: dict[str, int] = {}
        for t in toks:
            counts[t] = counts.get(t, 0) + 1
        out[f"{prefix}#{b}"] = min(counts, key=lambda t: (-counts[t], t))


def extract(
    frame: pl.DataFrame,
    spec: FeatureSpec,
    bucket_tokens: dict[str, str] | None = None,
    progress: Progress | None = None,
    events: JobEvents | None = None,
) -> Features:
    """The feature matrix of `frame` (which holds only the columns `feature_inputs` names);
    with `spec.queue`, the queue counts come from `events` (NaN without)."""
    if spec.uses_history and HISTORY_COLUMN not in frame.columns:
        raise ValueError(f"this feature spec needs {HISTORY_COLUMN}, which the frame lacks")
    n = frame.height
    dense = _row_dense(frame, spec)
    # matrix width: keys of the row's resolved matrix
    m_idx, m_first = _distinct(frame, [pl.col("matrix")])
    m_texts = frame["matrix"].gather(m_first).to_list()
    m_items = [_matrix_items(t) for t in m_texts]
    if n:
        dense[:, -1] = np.array([float(len(x)) for x in m_items])[m_idx]
    # job-level features, once per distinct (workflow, key, job block)
    j_idx, j_first = _distinct(
        frame,
        [pl.col("workflow_yaml").hash(), pl.col("job_key"), pl.col("job_yaml").hash()],
    )
    cache: dict[str, Workflow | None] = {}
    # Each distinct workflow text once, shared by all its jobs: a 1 MB file with thousands of
    # jobs must not become thousands of 1 MB strings.
    w_idx, w_first = _distinct(frame, [pl.col("workflow_yaml").hash()])
    w_texts = frame["workflow_yaml"].gather(w_first).to_list()
    wf_texts = [w_texts[k] for k in w_idx[j_first]]
    keys = frame["job_key"].gather(j_first).to_list()
    blocks = frame["job_yaml"].gather(j_first).to_list()
    job_dense: list[list[float]] = []
    job_uses: list[list[str]] = []
    job_sh: list[list[str]] = []
    for i, (wf_text, key, block) in enumerate(zip(wf_texts, keys, blocks, strict=True)):
        if i % 500 == 0:
            say(progress, f"parsing job {i + 1}/{len(j_first)}")
        d, toks = _cached_job_features(wf_text, key, block, cache)
        job_dense.append(d)
        job_uses.append(toks["uses"])
        job_sh.append(toks["sh"])
    jd = np.array(job_dense, dtype=np.float64).reshape(len(j_first), len(_JOB_DENSE))
    parts = [dense, jd[j_idx]] if n else [dense, np.zeros((0, len(_JOB_DENSE)))]
    if spec.uses_history:
        parts.append(_history(frame))
    if spec.queue:
        parts.append(_queue_dense(frame, events))
    dense_all = np.hstack(parts)
    uses_m, uses_seen = _bag_matrix(job_uses, "uses", spec.uses_buckets)
    sh_m, sh_seen = _bag_matrix(job_sh, "sh", spec.shell_buckets)
    l_idx, l_first = _distinct(frame, [pl.col("runner_labels").list.join("\x1f")])
    label_rows = [list(x or []) for x in frame["runner_labels"].gather(l_first).to_list()]
    lab_m, lab_seen = _bag_matrix(
        [[t.lower() for t in r] for r in label_rows], "label", spec.label_buckets
    )
    mat_m, mat_seen = _bag_matrix(m_items, "matrix", spec.matrix_buckets)
    if bucket_tokens is not None:
        for prefix, seen in (
            ("uses", uses_seen),
            ("sh", sh_seen),
            ("label", lab_seen),
            ("matrix", mat_seen),
        ):
            _name_buckets(prefix, seen, bucket_tokens)
    matrix = sp.hstack(
        [
            sp.csr_matrix(dense_all.astype(np.float32)),
            uses_m[j_idx],
            sh_m[j_idx],
            lab_m[l_idx],
            mat_m[m_idx],
        ],
        format="csr",
    )
    names = spec.names()
    assert matrix.shape[1] == len(names), (matrix.shape, len(names))
    return Features(matrix=matrix, names=names)


ENCODING_LEVELS: tuple[tuple[str, ...], ...] = (
    ("repo_id", "workflow_path", "job_name"),
    ("repo_id", "workflow_path"),
    ("repo_id",),
)
"""Groups whose training targets the encoder summarises, most specific first."""
ENCODING_INPUTS: tuple[str, ...] = ("repo_id", "workflow_path", "job_name")


class TargetEncoder:
    """Mean log1p target and row count of the job's group in the training split (what
    group-median knows), as features. Training rows get out-of-fold values (each row's own
    target never reaches its features); other rows get the statistics of all training rows.
    Groups unseen in training are NaN, which the trees route on their own."""

    def __init__(self, folds: int = 5, seed: int = 0) -> None:
        self.folds = folds
        self.seed = seed
        self.tables: list[pl.DataFrame] = []

    @staticmethod
    def names() -> list[str]:
        out = []
        for level in ENCODING_LEVELS:
            tag = "job" if len(level) == 3 else "workflow" if len(level) == 2 else "repo"
            out.extend([f"enc_{tag}_mean", f"enc_{tag}_n"])
        return out

    def fit_transform(self, keys: pl.DataFrame, y_log: np.ndarray) -> np.ndarray:
        """Out-of-fold encodings of the training rows; keeps full-data tables for transform."""
        rng = np.random.default_rng(self.seed)
        frame = keys.select(ENCODING_INPUTS).with_columns(
            pl.Series("__y", y_log, dtype=pl.Float64),
            pl.Series("__fold", rng.integers(0, self.folds, size=keys.height), dtype=pl.Int64),
        )
        self.tables = []
        cols = []
        for level in ENCODING_LEVELS:
            lv = list(level)
            total = frame.group_by(lv).agg(pl.col("__y").sum().alias("s"), pl.len().alias("n"))
            self.tables.append(total.with_columns((pl.col("s") / pl.col("n")).alias("mean")))
            per_fold = frame.group_by([*lv, "__fold"]).agg(
                pl.col("__y").sum().alias("sf"), pl.len().alias("nf")
            )
            joined = (
                frame.with_row_index("__i")
                .join(total, on=lv, how="left", nulls_equal=True)
                .join(per_fold, on=[*lv, "__fold"], how="left", nulls_equal=True)
                .sort("__i")
            )
            n_out = (joined["n"] - joined["nf"]).cast(pl.Float64).to_numpy()
            s_out = (joined["s"] - joined["sf"]).to_numpy()
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = np.where(n_out > 0, s_out / np.where(n_out > 0, n_out, 1.0), np.nan)
            cols.extend([mean, n_out])
        return np.column_stack(cols).astype(np.float32)

    def transform(self, keys: pl.DataFrame) -> np.ndarray:
        frame = keys.select(ENCODING_INPUTS).with_row_index("__i")
        cols = []
        for level, table in zip(ENCODING_LEVELS, self.tables, strict=True):
            joined = frame.join(
                table.select(*level, "mean", "n"), on=list(level), how="left", nulls_equal=True
            ).sort("__i")
            cols.append(joined["mean"].cast(pl.Float64).fill_null(math.nan).to_numpy())
            cols.append(joined["n"].cast(pl.Float64).fill_null(0.0).to_numpy())
        return np.column_stack(cols).astype(np.float32)

    def save(self, folder: Path, prefix: str) -> list[str]:
        files = []
        for i, table in enumerate(self.tables):
            name = f"{prefix}-encoding-{i}.parquet"
            table.write_parquet(folder / name)
            files.append(name)
        return files

    @classmethod
    def load(cls, folder: Path, files: list[str]) -> TargetEncoder:
        enc = cls()
        enc.tables = [read_parquet(folder / f) for f in files]
        return enc
