"""Which job a row is: identity features for the tree baselines, beside the configuration
features of `gharuntime.baselines.features`.

The YAML features describe what a job does; they cannot tell ozone's `unit (grpc)` from ratis's
`unit (grpc)`, and on real jobs the job's identity decides its duration more than its YAML does
(README, "what the real jobs teach"). Three kinds of column, all learned from training rows:

- categoricals (integer codes of the training vocabulary, most frequent first; NaN = not seen in
  training): the repository, the workflow file, the job key and the job (repo + workflow + job
  name, group-median's group), all qualified by their repository, and the workflow name and the
  runner label set, which are not;
- one categorical per frequent matrix key (`matrix.check`, `matrix.os`, ...), its value;
- a hashed bag of the words of the job name, job key, workflow name and workflow file name
  (`lint`, `unit`, `docs`, ...): these carry over to repositories never seen in training.

Qualified columns say nothing about a repository that training never saw. `identity_masks`
hides them on a share of the training rows equal to the share of validation rows whose
repository (or job) training lacks, so the trees learn what to do without them in proportion
to how often the test will ask (all rows on cross_repo, the few new jobs on temporal).
"""

from __future__ import annotations

import json
import math
import re
import zlib
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import polars as pl

__all__ = [
    "IDENTITY_INPUTS",
    "NO_VALIDATION_SHARES",
    "QUALIFIED",
    "IdentitySpec",
    "fit_identity",
    "identity_masks",
    "identity_matrix",
    "name_tokens",
    "unseen_shares",
]

IDENTITY_INPUTS: tuple[str, ...] = (
    "repo",
    "repo_id",
    "workflow_name",
    "workflow_path",
    "job_name",
    "job_key",
    "matrix",
    "runner_labels",
)
"""The input columns the identity features read (every track allows them)."""

_SEP = "\x1f"
_CATEGORIES: dict[str, pl.Expr] = {
    "id.repo": pl.col("repo").cast(pl.String),
    "id.workflow": pl.concat_str([pl.col("repo"), pl.col("workflow_path")], separator=_SEP),
    "id.job_key": pl.concat_str(
        [pl.col("repo"), pl.col("workflow_path"), pl.col("job_key")], separator=_SEP
    ),
    "id.job": pl.concat_str(
        [pl.col("repo"), pl.col("workflow_path"), pl.col("job_name")], separator=_SEP
    ),
    "id.workflow_name": pl.col("workflow_name").cast(pl.String),
    "id.labels": pl.col("runner_labels")
    .list.eval(pl.element().str.to_lowercase())
    .list.sort()
    .list.join(","),
}
QUALIFIED: dict[str, str] = {
    "id.repo": "repo",
    "id.workflow": "repo",
    "id.job_key": "job",
    "id.job": "job",
}
"""Categoricals that name one repository's things, and the level whose absence hides them:
`repo` (the repository is new) hides all four, `job` (a new job of a known repository) the last
two."""

_WORD = re.compile(r"[a-z][a-z0-9]+")


def name_tokens(*texts: str | None) -> list[str]:
    """Lower-case words of names: `Unit (grpc) / build-java 17` → unit, grpc, build, java."""
    out: list[str] = []
    for text in texts:
        if text:
            out.extend(w for w in _WORD.findall(text.lower()) if len(w) < 30)
    return out


@dataclass(frozen=True)
class IdentitySpec:
    """The vocabularies the identity features learned from training rows (saved with a model)."""

    vocab: dict[str, list[str]]
    matrix_keys: list[str]
    name_buckets: int = 64
    bucket_tokens: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> IdentitySpec:
        return cls(**dict(data))

    def categorical_names(self) -> list[str]:
        return [*_CATEGORIES, *(f"matrix.{k}" for k in self.matrix_keys)]

    def names(self) -> list[str]:
        return [*self.categorical_names(), *(f"name#{i}" for i in range(self.name_buckets))]

    def readable(self, name: str) -> str:
        token = self.bucket_tokens.get(name)
        return f"{name}({token})" if token else name


def _matrix_values(text: str | None) -> dict[str, str]:
    if not text:
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    if not isinstance(value, dict):
        return {}
    return {str(k): json.dumps(v, sort_keys=True) for k, v in value.items()}


def _category_frame(frame: pl.DataFrame, spec_keys: list[str] | None) -> pl.DataFrame:
    cats = frame.select([e.alias(n) for n, e in _CATEGORIES.items()])
    if spec_keys is None:
        return cats
    texts = frame["matrix"].to_list()
    parsed: dict[str | None, dict[str, str]] = {}
    cols: dict[str, list[str | None]] = {k: [] for k in spec_keys}
    for t in texts:
        if t not in parsed:
            parsed[t] = _matrix_values(t)
        values = parsed[t]
        for k in spec_keys:
            cols[k].append(values.get(k))
    extra = [pl.Series(f"matrix.{k}", v, dtype=pl.String) for k, v in cols.items()]
    return cats.with_columns(extra) if extra else cats


def _top_values(values: pl.Series, limit: int) -> list[str]:
    counts = values.drop_nulls().value_counts(sort=True)
    ordered = counts.sort(["count", values.name], descending=[True, False])
    return [str(v) for v in ordered[values.name].head(limit).to_list()]


def fit_identity(
    train: pl.DataFrame, *, max_values: int = 2000, matrix_keys: int = 8, name_buckets: int = 64
) -> IdentitySpec:
    """Vocabularies from the training rows: each categorical's `max_values` most frequent
    values, the `matrix_keys` most frequent matrix keys, and the name buckets' tokens."""
    key_counts: dict[str, int] = {}
    for text, n in train["matrix"].value_counts().iter_rows():
        for k in _matrix_values(text):
            key_counts[k] = key_counts.get(k, 0) + int(n)
    keys = sorted(key_counts, key=lambda k: (-key_counts[k], k))[:matrix_keys]
    cats = _category_frame(train, keys)
    vocab = {name: _top_values(cats[name], max_values) for name in cats.columns}
    spec = IdentitySpec(vocab=vocab, matrix_keys=keys, name_buckets=name_buckets)
    tokens: dict[str, str] = {}
    _name_bag(train, spec, tokens)
    return IdentitySpec(
        vocab=vocab, matrix_keys=keys, name_buckets=name_buckets, bucket_tokens=tokens
    )


def _name_bag(
    frame: pl.DataFrame, spec: IdentitySpec, bucket_tokens: dict[str, str] | None = None
) -> np.ndarray:
    n = spec.name_buckets
    distinct = frame.select(
        pl.col("job_name"),
        pl.col("job_key"),
        pl.col("workflow_name"),
        pl.col("workflow_path").str.replace(r"^.*/", ""),
    )
    keyed = distinct.with_row_index("__i")
    cols = distinct.columns
    firsts = (
        keyed.group_by(cols, maintain_order=True).agg(pl.col("__i").first()).with_row_index("__j")
    )
    index = (
        keyed.join(firsts.drop("__i"), on=cols, how="left", nulls_equal=True, maintain_order="left")
    )["__j"].to_numpy()
    bag = np.zeros((firsts.height, n), dtype=np.float32)
    seen: dict[int, dict[str, int]] = {}
    for j, row in enumerate(firsts.select(cols).iter_rows()):
        for token in name_tokens(*row):
            b = zlib.crc32(f"name:{token}".encode()) % n
            bag[j, b] += 1.0
            counts = seen.setdefault(b, {})
            counts[token] = counts.get(token, 0) + 1
    if bucket_tokens is not None:
        for b, counts in seen.items():
            bucket_tokens[f"name#{b}"] = min(counts, key=lambda t: (-counts[t], t))
    return bag[index] if frame.height else np.zeros((0, n), dtype=np.float32)


def identity_matrix(frame: pl.DataFrame, spec: IdentitySpec) -> np.ndarray:
    """The identity columns of `frame` (float32; categorical codes, NaN = unseen), in
    `spec.names()` order."""
    cats = _category_frame(frame, spec.matrix_keys)
    out = np.full((frame.height, len(spec.names())), math.nan, dtype=np.float32)
    for j, name in enumerate(spec.categorical_names()):
        table = pl.DataFrame(
            {"__v": spec.vocab[name], "__code": np.arange(len(spec.vocab[name]), dtype=np.float64)},
            schema={"__v": pl.String, "__code": pl.Float64},
        )
        codes = (
            cats.select(pl.col(name).alias("__v"))
            .join(table, on="__v", how="left", maintain_order="left")["__code"]
            .fill_null(math.nan)
            .to_numpy()
        )
        out[:, j] = codes
    out[:, len(spec.categorical_names()) :] = _name_bag(frame, spec)
    return out


NO_VALIDATION_SHARES: dict[str, float] = {"repo": 0.5, "job": 0.5}
"""The shares used when there is no validation split to measure them (a build that fixes every
repository's cross_repo split may leave it empty): half the training rows learn without the
qualified columns, so the trees can predict both a known job and one of a new repository."""


def unseen_shares(train: pl.DataFrame, validation: pl.DataFrame | None) -> dict[str, float]:
    """Share of validation rows whose repository (`repo`), and whose job (`job`: repo +
    workflow + job name), no training row has; NO_VALIDATION_SHARES without validation rows."""
    if validation is None or validation.height == 0:
        return dict(NO_VALIDATION_SHARES)
    repos = validation.join(train.select("repo_id").unique(), on="repo_id", how="anti").height
    group = ["repo_id", "workflow_path", "job_name"]
    jobs = validation.join(train.select(group).unique(), on=group, how="anti").height
    return {"repo": repos / validation.height, "job": max(jobs, repos) / validation.height}


def identity_masks(rows: int, shares: Mapping[str, float], seed: int) -> dict[str, np.ndarray]:
    """Which training rows play a new repository (`repo`) or a new job of a known one (`job`,
    which includes `repo`), drawn at the validation split's shares."""
    rng = np.random.default_rng(seed)
    draw = rng.random(rows)
    repo = draw < shares["repo"]
    job = draw < max(shares["job"], shares["repo"])
    return {"repo": repo, "job": job}
