"""LASER's serialization: one job-table row → the text prompt a language model reads.

The prompt holds, in this order (a section is left out when its column is empty):

    repo: <owner/name> | language: <lang> | stars: <n> | size_kb: <n> | fork: <yes|no>
    topics: <t1>, <t2>
    workflow: <name> (<path>)
    event: <event> | branch: <branch> (default) | attempt: <n> | queued: <Sun 18:38 UTC>
    commit: <first line of the head commit message>
    workflow context:
    <the workflow's own top-level `on`, `env`, `defaults`, `concurrency`, `permissions` blocks>
    job: <job key> | name: <job name as GitHub shows it>
    runner: <labels> (<os>)
    needs: <job keys>
    matrix: <key=value, ...>
    step names: <GitHub's step list>
    job yaml:
    <the job's own YAML block, as written in the workflow>
    history_s: <earlier durations, most recent first>          (history track only)

Token budget. When the prompt has more tokens than `budget` (counted by `count_tokens`, the
model's tokenizer in practice), it is shortened one stage at a time, each stage only as far as
needed, in this documented order (first cut first):

 1. `topics` dropped;
 2. the commit message cut to 60 characters, then dropped;
 3. the workflow context cut from its end (to 24, 12, 6, 3 lines), then dropped;
 4. `step names` dropped (the job YAML's steps say more);
 5. the job YAML's keys other than `steps:` cut to their first line, then dropped;
 6. the job's steps: each step cut to 8, 4, 2, then 1 line(s), then steps dropped from the end
    (a `# N more steps` line says how many).
The job's own steps are thus kept longest. The header lines (repo, workflow, event, job, runner,
needs, matrix, history) are never cut: when they alone exceed the budget `PromptTooLong` is
raised. The same row, track and budget always give the same text.

No torch: this module is plain text processing.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

import yaml

from gharuntime.contract import HISTORY_COLUMN, TRACKS
from gharuntime.errors import GharuntimeError

__all__ = [
    "CONTEXT_KEYS",
    "SERIALIZED_COLUMNS",
    "PromptTooLong",
    "Shared",
    "build_prompt",
    "columns_for",
    "estimate_tokens",
    "serialize_job",
    "serialize_many",
    "too_long",
]

SERIALIZED_COLUMNS: tuple[str, ...] = (
    "repo",
    "repo_language",
    "repo_stars",
    "repo_size_kb",
    "repo_topics",
    "repo_fork",
    "run_attempt",
    "event",
    "head_branch",
    "is_default_branch",
    "head_commit_message",
    "workflow_path",
    "workflow_name",
    "workflow_yaml",
    "job_name",
    "job_key",
    "job_yaml",
    "matrix",
    "runner_labels",
    "runner_os",
    "needs",
    "step_names",
    "created_at",
)
"""The input columns LASER reads on every track (history_duration_s is added on history)."""

CONTEXT_KEYS: tuple[str, ...] = ("on", "env", "defaults", "concurrency", "permissions")
"""Workflow-level keys a job inherits, shown from the workflow YAML in this order."""

_COMMIT_CUT = 60
_CONTEXT_CUTS = (24, 12, 6, 3)
_STEP_CUTS = (8, 4, 2, 1)


class PromptTooLong(GharuntimeError, ValueError):
    """Even the shortest prompt (header lines only) has more tokens than the budget."""


def columns_for(track: str) -> tuple[str, ...]:
    """The columns LASER declares it reads on `track` (checked by the Method.reads rule)."""
    if track not in TRACKS:
        raise ValueError(f"unknown track {track!r}; choose one of {', '.join(TRACKS)}")
    if TRACKS[track].uses_history:
        return (*SERIALIZED_COLUMNS, HISTORY_COLUMN)
    return SERIALIZED_COLUMNS


_ESTIMATE = re.compile(r"[A-Za-z]+|[0-9]|[^\sA-Za-z0-9]")


def estimate_tokens(text: str) -> int:
    """A tokenizer-free token count: a run of letters, each digit and each other visible
    character count one. Close to (usually above) a BPE count for code-like text."""
    return len(_ESTIMATE.findall(text))


# --- YAML blocks, cut from the original text so the model reads the workflow as written ---------


def _node_lines(lines: list[str], start: int, value: yaml.Node) -> list[str]:
    """Lines start .. end of `value` (as in gharuntime.workflow: a block node ends where the next
    token starts), trailing blank and comment-only lines dropped."""
    mark = value.end_mark
    before = lines[mark.line][: mark.column] if mark.line < len(lines) else ""
    end = mark.line + (1 if before.strip() else 0)
    chunk = lines[start:end]
    while chunk and (not chunk[-1].strip() or chunk[-1].lstrip().startswith("#")):
        chunk.pop()
    return chunk


def _dedent(chunk: list[str]) -> list[str]:
    indent = min((len(s) - len(s.lstrip()) for s in chunk if s.strip()), default=0)
    return [s[indent:] for s in chunk]


_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _compose(text: str) -> yaml.Node | None:
    try:
        return yaml.compose(text, Loader=_LOADER)
    except yaml.YAMLError:
        return None


@lru_cache(maxsize=256)
def _workflow_context(workflow_yaml: str) -> tuple[str, ...]:
    """The inherited top-level blocks of a workflow, as lines; () when it does not parse."""
    node = _compose(workflow_yaml)
    if not isinstance(node, yaml.MappingNode):
        return ()
    lines = workflow_yaml.splitlines()
    blocks: dict[str, list[str]] = {}
    for key, value in node.value:
        name = str(key.value)
        if name in CONTEXT_KEYS and name not in blocks:
            blocks[name] = _dedent(_node_lines(lines, key.start_mark.line, value))
    return tuple(line for k in CONTEXT_KEYS for line in blocks.get(k, []))


@dataclass(frozen=True)
class _JobText:
    """A job's YAML split so that its steps can be cut last."""

    head: str  # "key:" line
    others: tuple[tuple[str, ...], ...]  # each non-steps child block, as lines (indented)
    steps_head: str | None  # "  steps:" line, or None when the job has no steps
    steps: tuple[tuple[str, ...], ...]  # each step's lines (indented)
    raw: str  # the block as given, used whole when it fits


@lru_cache(maxsize=1024)
def _job_text(job_yaml: str) -> _JobText:
    text = job_yaml if job_yaml.endswith("\n") else job_yaml + "\n"
    lines = text.splitlines()
    node = _compose(text)
    if not (isinstance(node, yaml.MappingNode) and len(node.value) == 1):
        return _JobText(lines[0] if lines else "", (tuple(lines[1:]),), None, (), text)
    key, body = node.value[0]
    head = lines[key.start_mark.line]
    if not isinstance(body, yaml.MappingNode):
        return _JobText(head, (tuple(lines[key.start_mark.line + 1 :]),), None, (), text)
    others: list[tuple[str, ...]] = []
    steps_head: str | None = None
    steps: list[tuple[str, ...]] = []
    for child_key, child in body.value:
        block = _node_lines(lines, child_key.start_mark.line, child)
        if (
            child_key.value == "steps"
            and isinstance(child, yaml.SequenceNode)
            and steps_head is None
        ):
            steps_head = block[0]
            for item in child.value:
                start = item.start_mark.line
                steps.append(tuple(_node_lines(lines, start, item)))
        else:
            others.append(tuple(block))
    return _JobText(head, tuple(others), steps_head, tuple(steps), text)


@lru_cache(maxsize=256)
def _job_from_workflow(workflow_yaml: str, job_key: str) -> str | None:
    node = _compose(workflow_yaml)
    if not isinstance(node, yaml.MappingNode):
        return None
    lines = workflow_yaml.splitlines()
    jobs = next((v for k, v in node.value if k.value == "jobs"), None)
    if not isinstance(jobs, yaml.MappingNode):
        return None
    for k, v in jobs.value:
        if str(k.value) == job_key:
            return "\n".join(_dedent(_node_lines(lines, k.start_mark.line, v))) + "\n"
    return None


# --- the prompt ---------------------------------------------------------------------------------


def _text(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _num(value: float) -> str:
    if not math.isfinite(value):
        return str(value)
    if abs(value) >= 100:
        return str(round(value))
    return f"{value:.3g}"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _matrix(value: Any) -> str:
    if value is None or value == "":
        return ""
    try:
        data = json.loads(value) if isinstance(value, str) else value
    except json.JSONDecodeError:
        return _one_line(str(value))
    if isinstance(data, dict):
        parts = []
        for k, v in data.items():
            shown = (
                v if isinstance(v, str) else json.dumps(v, sort_keys=True, separators=(",", ":"))
            )
            parts.append(f"{k}={shown}")
        return ", ".join(parts)
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def _strings(value: Any) -> list[str]:
    if value is None:
        return []
    return [_one_line(str(v)) for v in value]


@dataclass
class _Prompt:
    """The parts of a prompt and how far each has been cut."""

    header_top: list[str]
    topics: str
    workflow_line: str
    event_line: str
    commit: str
    context: tuple[str, ...]
    job_lines: list[str]
    step_names: str
    job: _JobText | None
    job_unknown: str
    history: str
    commit_cut: int | None = None  # None: whole; 0: dropped
    context_cut: int | None = None
    drop_topics: bool = False
    drop_step_names: bool = False
    others_cut: int | None = None  # None: whole; 1: first line of each; 0: dropped
    step_cut: int | None = None  # max lines per step
    steps_kept: int | None = None
    whole_job: bool = True  # the job block exactly as written (nothing cut yet)

    def render(self) -> str:
        out: list[str] = list(self.header_top)
        if self.topics and not self.drop_topics:
            out.append(f"topics: {self.topics}")
        out.append(self.workflow_line)
        out.append(self.event_line)
        commit = self.commit if self.commit_cut is None else self.commit[: self.commit_cut]
        if commit:
            out.append(f"commit: {commit}")
        context = self.context if self.context_cut is None else self.context[: self.context_cut]
        if context:
            out.append("workflow context:")
            out.extend(context)
        out.extend(self.job_lines)
        if self.step_names and not self.drop_step_names:
            out.append(f"step names: {self.step_names}")
        out.append("job yaml:")
        out.extend(self._job_yaml())
        if self.history:
            out.append(f"history_s: {self.history}")
        return "\n".join(out)

    def _job_yaml(self) -> list[str]:
        if self.job is None:
            return [self.job_unknown]
        if self.whole_job:
            return self.job.raw.rstrip("\n").splitlines()
        out = [self.job.head]
        for block in self.job.others:
            if self.others_cut is None:
                out.extend(block)
            elif self.others_cut == 1 and block:
                out.append(block[0] + (" …" if len(block) > 1 else ""))
        if self.job.steps_head is not None:
            out.append(self.job.steps_head)
            kept = self.job.steps if self.steps_kept is None else self.job.steps[: self.steps_kept]
            for step in kept:
                lines = step if self.step_cut is None else step[: self.step_cut]
                out.extend(lines)
            dropped = len(self.job.steps) - len(kept)
            if dropped:
                indent = self.job.steps_head[
                    : len(self.job.steps_head) - len(self.job.steps_head.lstrip())
                ]
                out.append(f"{indent}# {dropped} more step{'s' if dropped > 1 else ''}")
        return out

    def cuts(self) -> Iterator[None]:
        """Shorten one stage at a time, in the documented order; yields after each cut."""
        if self.topics:
            self.drop_topics = True
            yield None
        if self.commit:
            if len(self.commit) > _COMMIT_CUT:
                self.commit_cut = _COMMIT_CUT
                yield None
            self.commit_cut = 0
            yield None
        if self.context:
            for n in _CONTEXT_CUTS:
                if n < len(self.context) and (self.context_cut is None or n < self.context_cut):
                    self.context_cut = n
                    yield None
            self.context_cut = 0
            yield None
        if self.step_names:
            self.drop_step_names = True
            yield None
        if self.job is None:
            return
        self.whole_job = False
        yield None  # the job re-assembled from its parsed blocks (drops comments between them)
        if self.job.others:
            self.others_cut = 1
            yield None
            self.others_cut = 0
            yield None
        longest = max((len(s) for s in self.job.steps), default=0)
        for n in _STEP_CUTS:
            if n < longest:
                self.step_cut = n
                yield None
        for kept in range(len(self.job.steps) - 1, -1, -1):
            self.steps_kept = kept
            yield None


class Shared:
    """The parsed YAML of a batch of prompts, each distinct text parsed once: the job YAML and
    the workflow context are shared by every run of a job at one commit and by its matrix
    siblings. Unbounded, so it lives as long as one batch (the module's LRU caches serve
    single rows)."""

    def __init__(self) -> None:
        self._context: dict[str, tuple[str, ...]] = {}
        self._job: dict[str, _JobText] = {}
        self._from_workflow: dict[tuple[str, str], str | None] = {}

    def workflow_context(self, workflow_yaml: str) -> tuple[str, ...]:
        out = self._context.get(workflow_yaml)
        if out is None:
            out = self._context[workflow_yaml] = _workflow_context.__wrapped__(workflow_yaml)
        return out

    def job_text(self, job_yaml: str) -> _JobText:
        out = self._job.get(job_yaml)
        if out is None:
            out = self._job[job_yaml] = _job_text.__wrapped__(job_yaml)
        return out

    def job_from_workflow(self, workflow_yaml: str, job_key: str) -> str | None:
        key = (workflow_yaml, job_key)
        if key not in self._from_workflow:
            self._from_workflow[key] = _job_from_workflow.__wrapped__(workflow_yaml, job_key)
        return self._from_workflow[key]


def build_prompt(row: Mapping[str, Any], track: str, shared: Shared) -> _Prompt:
    """The parts of `row`'s prompt (render() it; cuts() shortens it), parsing YAML through
    `shared` (gharuntime.baselines.laser.prompts serializes batches this way)."""
    return _build(row, track, shared)


def _build(row: Mapping[str, Any], track: str, shared: Shared | None = None) -> _Prompt:
    def get(name: str) -> Any:
        return row.get(name)

    context_of = shared.workflow_context if shared else _workflow_context
    job_text_of = shared.job_text if shared else _job_text
    from_workflow = shared.job_from_workflow if shared else _job_from_workflow

    repo_bits = [f"repo: {_text(get('repo')) or '?'}"]
    if get("repo_language"):
        repo_bits.append(f"language: {_text(get('repo_language'))}")
    for col, label in (("repo_stars", "stars"), ("repo_size_kb", "size_kb")):
        if get(col) is not None:
            repo_bits.append(f"{label}: {int(get(col))}")
    if get("repo_fork") is not None:
        repo_bits.append(f"fork: {'yes' if get('repo_fork') else 'no'}")

    wf_name = _one_line(_text(get("workflow_name")))
    wf_path = _text(get("workflow_path"))
    workflow_line = f"workflow: {wf_name} ({wf_path})" if wf_name else f"workflow: {wf_path}"

    event_bits = [f"event: {_text(get('event')) or '?'}"]
    if get("head_branch"):
        default = " (default)" if get("is_default_branch") else ""
        event_bits.append(f"branch: {_one_line(_text(get('head_branch')))}{default}")
    if get("run_attempt") is not None:
        event_bits.append(f"attempt: {int(get('run_attempt'))}")
    created = get("created_at")
    if isinstance(created, datetime):
        event_bits.append(f"queued: {created.strftime('%a %H:%M')} UTC")

    commit = _one_line(_text(get("head_commit_message")).split("\n", 1)[0])
    workflow_yaml = get("workflow_yaml")
    context = context_of(workflow_yaml) if workflow_yaml else ()

    job_key = _text(get("job_key"))
    job_lines = [f"job: {job_key or '?'} | name: {_one_line(_text(get('job_name')))}"]
    labels = _strings(get("runner_labels"))
    runner_os = _text(get("runner_os"))
    if labels or runner_os:
        job_lines.append(
            f"runner: {', '.join(labels) or '?'}" + (f" ({runner_os})" if runner_os else "")
        )
    needs = _strings(get("needs"))
    if needs:
        job_lines.append(f"needs: {', '.join(needs)}")
    matrix = _matrix(get("matrix"))
    if matrix:
        job_lines.append(f"matrix: {matrix}")

    job_yaml = get("job_yaml")
    if not job_yaml and workflow_yaml and job_key:
        job_yaml = from_workflow(workflow_yaml, job_key)
    history = ""
    if TRACKS[track].uses_history:
        hist = get(HISTORY_COLUMN)
        history = (
            ", ".join(_num(float(v)) for v in hist) if hist is not None and len(hist) else "none"
        )
    return _Prompt(
        header_top=[" | ".join(repo_bits)],
        topics=", ".join(_strings(get("repo_topics"))),
        workflow_line=workflow_line,
        event_line=" | ".join(event_bits),
        commit=commit,
        context=context,
        job_lines=job_lines,
        step_names=" | ".join(_strings(get("step_names"))),
        job=job_text_of(job_yaml) if job_yaml else None,
        job_unknown="(unknown: the job's YAML was not resolved)",
        history=history,
    )


def serialize_job(
    row: Mapping[str, Any],
    *,
    track: str,
    budget: int,
    count_tokens: Callable[[str], int] = estimate_tokens,
) -> str:
    """The prompt for one job-table row (a mapping column → value, as `DataFrame.iter_rows(
    named=True)` gives), at most `budget` tokens by `count_tokens`. Raises PromptTooLong when the
    header lines alone exceed the budget. Columns absent from `row` count as empty."""
    if track not in TRACKS:
        raise ValueError(f"unknown track {track!r}; choose one of {', '.join(TRACKS)}")
    if budget < 1:
        raise ValueError(f"budget must be a positive number of tokens, got {budget}")
    prompt = _build(row, track)
    text = prompt.render()
    if count_tokens(text) <= budget:
        return text
    for _ in prompt.cuts():
        text = prompt.render()
        if count_tokens(text) <= budget:
            return text
    raise PromptTooLong(too_long(row, count_tokens(text), budget))


def too_long(row: Mapping[str, Any], tokens: int, budget: int) -> str:
    """PromptTooLong's message for `row`, whose shortest prompt has `tokens` tokens."""
    return (
        f"job {_text(row.get('job_name'))!r} of {_text(row.get('repo'))!r}: even the shortest "
        f"prompt (header lines, no YAML) has {tokens} tokens, over the budget of "
        f"{budget}; raise the token budget"
    )


def serialize_many(
    rows: Sequence[Mapping[str, Any]],
    *,
    track: str,
    budget: int,
    count_tokens: Callable[[str], int] = estimate_tokens,
) -> list[str]:
    """serialize_job over rows."""
    return [serialize_job(r, track=track, budget=budget, count_tokens=count_tokens) for r in rows]
