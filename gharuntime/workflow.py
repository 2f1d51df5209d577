"""GitHub Actions workflow semantics, in one place.

Parse a workflow file, expand a job's matrix with GitHub's include/exclude rules, name each job
the way GitHub shows it, fill `${{ ... }}` templates, and recognise reusable-workflow callers.
The simulated GitHub, the build (job name → YAML key) and `predict` all use this module, so the
rules live here once and are tested against GitHub's documented behaviour and real job names.

GitHub's rules implemented here (docs: "Using a matrix for your jobs", "jobs.<job_id>.name"):
- exclude: a combination is dropped when it matches every key/value of an exclude entry.
- include: each entry's keys are added to every original combination whose *original* matrix
  values it does not contradict (values added by an earlier include may be overwritten); an
  entry that fits no original combination becomes a combination of its own.
- naming: without `name:` a matrix job is `key (v1, v2, ...)`; a `name:` that uses no matrix
  expression also gets the ` (v1, v2, ...)` suffix; a `name:` that does is rendered as is. Empty
  and null values are left out of the suffix; an object or array value contributes its leaf
  values in order (`{name: App One, repo: user/app1}` → `Build (App One, user/app1)`).
- a job's name is cut to MAX_JOB_NAME (100) characters: the first 97 and `...`; in a reusable
  workflow call each side of `caller / callee` is cut on its own (the API serves
  `caller / <100 characters>`). The evidence is cited in tests/test_workflow.py.
- a job that calls a reusable workflow (`uses:`) shows its jobs as `caller / callee`; with a
  resolver, a call is followed into the callee's jobs (their own block, steps, matrix, runner and
  `needs`, the plain `with:` inputs and input defaults filled into `${{ inputs.NAME }}`), nested
  up to MAX_WORKFLOW_LEVELS levels of workflows as GitHub allows. A call that cannot be
  followed keeps one `caller / ` job and says why (`call_problem`: remote, missing_callee,
  cycle, too_deep); inputs given as expressions are named in `unknown_inputs` and left as
  written, never guessed.
- a matrix may not expand to more than MAX_MATRIX_JOBS (256) jobs, nor a workflow with its calls
  to more than MAX_WORKFLOW_JOBS (`MatrixTooLarge`), both counted before anything is expanded.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import yaml

from gharuntime.errors import GharuntimeError
from gharuntime.expressions import UnknownExpression, evaluate, value_text
from gharuntime.matrix import MAX_MATRIX_JOBS, MatrixOverLimit, combinations

__all__ = [
    "CALL_PROBLEMS",
    "MAX_JOB_NAME",
    "MAX_MATRIX_JOBS",
    "MAX_WORKFLOW_JOBS",
    "MAX_WORKFLOW_LEVELS",
    "MAX_YAML_BYTES",
    "MAX_YAML_DEPTH",
    "MAX_YAML_NODES",
    "ExpandedJob",
    "JobSpec",
    "MatrixTooLarge",
    "Workflow",
    "WorkflowError",
    "default_job_name",
    "display_name",
    "expand_job",
    "expand_jobs",
    "expand_matrix",
    "job_key_of",
    "job_needs",
    "job_yaml_of",
    "local_callee_path",
    "parse_workflow",
    "render_expression",
    "runner_os",
    "strip_ref",
]


class WorkflowError(GharuntimeError):
    """A workflow file that does not parse or is not a workflow; `line` is 1-based when known."""

    def __init__(self, message: str, line: int | None = None, path: str | None = None) -> None:
        self.message = message
        self.line = line
        self.path = path
        where = path or "workflow"
        super().__init__(message, where=f"{where}:{line}" if line else where)


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """YAML 1.2 booleans: GitHub reads `on:` as the key "on", not as True. libyaml's parser when
    installed: ten times faster, and the simulated world parses every workflow version it makes."""


_Loader.yaml_implicit_resolvers = {
    ch: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for ch, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)


@dataclass(frozen=True)
class JobSpec:
    """One entry of `jobs:` as written, before matrix expansion."""

    key: str
    name: str | None
    runs_on: Any  # str, list of labels, {group, labels} or an expression string; None for callers
    matrix: Any  # the strategy.matrix mapping, an expression string, or None
    needs: tuple[str, ...]
    steps: tuple[Mapping[str, Any], ...]
    uses: str | None  # reusable workflow this job calls
    timeout_minutes: Any
    services: tuple[str, ...]
    container: Any
    condition: str | None  # `if:`
    continue_on_error: Any
    raw: Mapping[str, Any]
    yaml_block: str  # the job's own YAML text, key line included, dedented
    line: int  # 1-based line of the job key


@dataclass(frozen=True)
class Workflow:
    """A parsed workflow file."""

    name: str | None
    events: tuple[str, ...]
    jobs: dict[str, JobSpec]
    text: str
    raw: Mapping[str, Any] = field(repr=False)


@dataclass(frozen=True)
class ExpandedJob:
    """One job as GitHub runs and names it: a matrix combination of a JobSpec (or, for a caller
    of a reusable workflow, one job of the callee)."""

    key: str
    name: str
    matrix: dict[str, Any] | None
    runner_labels: tuple[str, ...]
    spec: JobSpec
    callee_key: str | None = None  # the job key inside the reusable workflow, for callers
    callee_if: str | None = None  # the `if:` of that job inside the reusable workflow
    callee: JobSpec | None = None  # that job's own spec, inputs filled in (None: not followed)
    callers: tuple[JobSpec, ...] = ()  # the calling jobs, outermost first (spec among them)
    call_problem: str | None = None  # why a call was not followed (CALL_PROBLEMS)
    unknown_inputs: tuple[str, ...] = ()  # `with:` inputs given as expressions, left as written
    needs: tuple[str, ...] | None = None  # job keys (job_key_of) it waits for; None: spec.needs


MAX_WORKFLOW_LEVELS = 10
"""GitHub runs at most ten levels of workflows: the caller and nine levels of reusable ones
(docs: "Reusing workflows", limitations)."""

CALL_PROBLEMS: Final = {
    "remote": "calls a workflow of another repository (owner/repo/...@ref): not read",
    "outside": "calls a path that leaves the repository (`..`, `/`): never read",
    "missing_callee": "the called file is not at that commit, or does not parse",
    "cycle": "the called workflow calls itself, directly or through others (GitHub refuses it)",
    "too_deep": f"nested deeper than GitHub's {MAX_WORKFLOW_LEVELS} levels of workflows",
    "not_read": "no reusable workflows were available to read",
}
"""Why a call to a reusable workflow was not followed, by `ExpandedJob.call_problem`."""


MAX_YAML_BYTES = 8 * 2**20  # far above any real workflow file (GitHub's largest are ~1 MB)
MAX_YAML_NODES = 1_000_000  # nodes once aliases are expanded: an alias bomb stops here
MAX_YAML_DEPTH = 200  # nesting


def _check_size(node: yaml.Node, path: str | None) -> None:
    """Refuse a document whose aliases expand to more than MAX_YAML_NODES nodes, or that nests
    deeper than MAX_YAML_DEPTH, before anything walks it (PyYAML shares an aliased node, so
    loading is cheap; every later walk of the data pays for the expansion)."""
    expanded: dict[int, int] = {}
    # iterative post-order walk; `expanded` memoizes shared (aliased) nodes
    stack: list[tuple[yaml.Node, int, bool]] = [(node, 1, False)]
    on_path: set[int] = set()
    shared = False
    while stack:
        current, depth, children_done = stack.pop()
        key = id(current)
        if children_done:
            on_path.discard(key)
            children = _children(current)
            total = 1 + sum(expanded[id(c)] for c in children)
            if total > MAX_YAML_NODES:
                how = "once its aliases are expanded" if shared else "(it uses no aliases)"
                raise WorkflowError(
                    f"YAML holds more than {MAX_YAML_NODES:,} nodes {how}; a workflow is "
                    f"refused above {MAX_YAML_NODES:,} nodes",
                    current.start_mark.line + 1,
                    path,
                )
            expanded[key] = total
            continue
        if key in expanded:
            shared = True  # a node met twice: an alias
            continue
        if key in on_path:
            raise WorkflowError("YAML refers to itself (a recursive alias)", None, path)
        if depth > MAX_YAML_DEPTH:
            raise WorkflowError(
                f"YAML nests deeper than {MAX_YAML_DEPTH} levels; a workflow is refused above that",
                current.start_mark.line + 1,
                path,
            )
        on_path.add(key)
        stack.append((current, depth, True))
        for child in _children(current):
            if id(child) not in expanded:
                stack.append((child, depth + 1, False))
            else:
                shared = True


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _key_of(node: yaml.Node) -> Any:
    """The key a mapping's key node became in the constructed data: YAML reads a plain `1`,
    `true`, `null` or `1.5` as a number, a bool or None, not as the text of the job id."""
    if not isinstance(node, yaml.ScalarNode) or node.tag == "tag:yaml.org,2002:str":
        return node.value
    try:
        return yaml.safe_load(node.value)
    except yaml.YAMLError:
        return node.value


def parse_workflow(text: str, path: str | None = None) -> Workflow:
    """Parse workflow YAML; raises WorkflowError (with the line) when it is not a workflow, or
    when it is larger than MAX_YAML_BYTES, nests deeper than MAX_YAML_DEPTH or expands (through
    aliases) to more than MAX_YAML_NODES nodes."""
    if len(text) > MAX_YAML_BYTES:
        raise WorkflowError(
            f"the file is {len(text) / 2**20:.1f} MB; a workflow is refused above "
            f"{MAX_YAML_BYTES // 2**20} MB",
            None,
            path,
        )
    try:
        loader = _Loader(text)
        try:  # compose once and build the data from that node: half the work of parsing twice
            node = loader.get_single_node()
            if node is not None:
                _check_size(node, path)
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise WorkflowError(
            f"YAML does not parse: {exc.problem or exc.context}",
            mark.line + 1 if mark else None,
            path,
        ) from exc
    except yaml.YAMLError as exc:
        raise WorkflowError(f"YAML does not parse: {exc}", None, path) from exc
    except RecursionError:
        raise WorkflowError(
            f"YAML nests too deeply; a workflow is refused above {MAX_YAML_DEPTH} levels",
            None,
            path,
        ) from None
    if not isinstance(data, dict) or not isinstance(node, yaml.MappingNode):
        raise WorkflowError(
            "not a workflow: the top level must be a mapping with `on:` and `jobs:`", 1, path
        )
    jobs_node = next((v for k, v in node.value if k.value == "jobs"), None)
    if jobs_node is None:
        raise WorkflowError("not a workflow: no `jobs:` mapping", 1, path)
    if (
        not isinstance(data["jobs"], dict)
        or not isinstance(jobs_node, yaml.MappingNode)
        or not data["jobs"]
    ):
        raise WorkflowError(
            "not a workflow: `jobs:` must be a non-empty mapping of job ids",
            jobs_node.start_mark.line + 1,
            path,
        )
    lines = text.splitlines()
    jobs: dict[str, JobSpec] = {}
    for key_node, value_node in jobs_node.value:
        key = str(key_node.value)  # the id as written: `1`, `true`, `null` or `1.5` too
        raw = data["jobs"].get(_key_of(key_node))
        line = key_node.start_mark.line + 1
        if not isinstance(raw, dict):
            raise WorkflowError(f"job {key!r} must be a mapping", line, path)
        if "runs-on" not in raw and "uses" not in raw:
            raise WorkflowError(f"job {key!r} has neither `runs-on:` nor `uses:`", line, path)
        jobs[key] = _job_spec(key, raw, line, _block(lines, key_node, value_node))
    return Workflow(
        name=str(data["name"]) if data.get("name") is not None else None,
        events=_events(data.get("on")),
        jobs=jobs,
        text=text,
        raw=data,
    )


def _block(lines: list[str], key_node: yaml.Node, value_node: yaml.Node) -> str:
    start = key_node.start_mark.line
    # A block node ends where the next token starts; that line belongs to the job only when
    # something of the job stands before the end column on it.
    mark = value_node.end_mark
    before = lines[mark.line][: mark.column] if mark.line < len(lines) else ""
    end = mark.line + (1 if before.strip() else 0)
    chunk = lines[start:end]
    while chunk and not chunk[-1].strip():
        chunk.pop()
    indent = min((len(s) - len(s.lstrip()) for s in chunk if s.strip()), default=0)
    return "\n".join(s[indent:] for s in chunk) + "\n"


def _as_tuple(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    return (str(value),)


def _events(on: Any) -> tuple[str, ...]:
    if isinstance(on, dict):
        return tuple(str(k) for k in on)
    return _as_tuple(on)


def _job_spec(key: str, raw: dict[str, Any], line: int, block: str) -> JobSpec:
    strategy = raw.get("strategy")
    steps = raw.get("steps") or []
    services = raw.get("services")
    return JobSpec(
        key=key,
        name=str(raw["name"]) if raw.get("name") is not None else None,
        runs_on=raw.get("runs-on"),
        matrix=strategy.get("matrix") if isinstance(strategy, dict) else None,
        needs=_as_tuple(raw.get("needs")),
        steps=tuple(s for s in steps if isinstance(s, dict)) if isinstance(steps, list) else (),
        uses=str(raw["uses"]) if raw.get("uses") is not None else None,
        timeout_minutes=raw.get("timeout-minutes"),
        services=tuple(str(k) for k in services) if isinstance(services, dict) else (),
        container=raw.get("container"),
        condition=str(raw["if"]) if raw.get("if") is not None else None,
        continue_on_error=raw.get("continue-on-error"),
        raw=raw,
        yaml_block=block,
        line=line,
    )


def _is_expression(value: Any) -> bool:
    return isinstance(value, str) and "${{" in value


def expand_matrix(matrix: Any) -> list[dict[str, Any]] | None:
    """All combinations of a strategy.matrix, in GitHub's order; [] when there is no matrix;
    None when the matrix (or part of it) is an expression only known at run time. Raises
    MatrixTooLarge over a limit of gharuntime.matrix, decided on counts before expanding."""
    if matrix is None:
        return []
    if not isinstance(matrix, dict):
        return None
    include = matrix.get("include", [])
    exclude = matrix.get("exclude", [])
    if _is_expression(include) or _is_expression(exclude):
        return None
    base = {k: v for k, v in matrix.items() if k not in ("include", "exclude")}
    for values in base.values():
        if not isinstance(values, list):
            return None
    combos = combinations(
        base,
        include if isinstance(include, list) else [],
        exclude if isinstance(exclude, list) else [],
    )
    if isinstance(combos, MatrixOverLimit):
        raise MatrixTooLarge(combos.text)
    return combos


MAX_JOB_NAME = 100
"""GitHub cuts a job's name to 100 characters: the first 97 and `...`."""


class MatrixTooLarge(WorkflowError):
    """A matrix over GitHub's MAX_MATRIX_JOBS or another limit of gharuntime.matrix, or a
    workflow whose calls multiply past MAX_WORKFLOW_JOBS jobs."""


MAX_WORKFLOW_JOBS = 4_096
"""Jobs one workflow file may make, calls followed: 256 per matrix, but a matrix caller of a
matrix callee multiplies (ten levels could make 256¹⁰); real workflows stay far below."""


def display_name(name: str) -> str:
    """`name` as GitHub stores and serves it: cut to MAX_JOB_NAME characters with `...`."""
    return name if len(name) <= MAX_JOB_NAME else name[: MAX_JOB_NAME - 3] + "..."


def _leaves(value: Any) -> list[str]:
    """The texts a matrix value adds to a default name: objects and arrays by their leaves."""
    if value is None or value == "":
        return []
    if isinstance(value, Mapping):
        return [t for v in value.values() for t in _leaves(v)]
    if isinstance(value, list):
        return [t for v in value for t in _leaves(v)]
    return [value_text(value)]


def default_job_name(base: str, combo: Mapping[str, Any] | None) -> str:
    """`base (v1, v2, ...)`, leaving out empty and null values and spelling objects and arrays
    out by their leaf values, or `base` without a matrix (not yet cut to MAX_JOB_NAME)."""
    if not combo:
        return base
    values = _leaves(list(combo.values()))
    return f"{base} ({', '.join(values)})" if values else base


_EXPR = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def render_expression(text: str, context: Mapping[str, Any]) -> str:
    """Fill every `${{ ... }}` in `text` that can be evaluated from `context` (e.g.
    {"matrix": {...}}); an expression that cannot be evaluated is left as written."""

    def one(m: re.Match[str]) -> str:
        try:
            value = evaluate(m.group(1), context)
        except UnknownExpression:
            return m.group(0)
        if value is None:
            return ""
        return value_text(value)

    return _EXPR.sub(one, text)


def _uses_matrix(text: str) -> bool:
    return any(re.search(r"\bmatrix\b", m.group(1)) for m in _EXPR.finditer(text))


def _labels(runs_on: Any, context: Mapping[str, Any]) -> tuple[str, ...]:
    if isinstance(runs_on, dict):
        labels = _as_tuple(runs_on.get("labels")) or _as_tuple(runs_on.get("group"))
    else:
        labels = _as_tuple(runs_on)
    out: list[str] = []
    for label in labels:
        rendered = render_expression(label, context)
        # `runs-on: ${{ matrix.os }}` may render a JSON list of labels.
        if rendered.startswith("["):
            try:
                out.extend(str(x) for x in json.loads(rendered))
                continue
            except ValueError:
                pass
        out.append(rendered)
    return tuple(out)


def local_callee_path(uses: str) -> str | None:
    """`./.github/workflows/x.yml` (with or without `@ref`) → `.github/workflows/x.yml`, written
    one way (`./.github/workflows/./x.yml` is the same file, so a self-call is a cycle); None for
    a workflow of another repository, and for a path that leaves the repository (`..`, `/`),
    which is never read."""
    if not uses.startswith("./"):
        return None
    path = posixpath.normpath(strip_ref(uses[2:])[0].split("@", 1)[0])
    if path.startswith(("/", "../")) or path in ("..", "."):
        return None
    return path


_INPUT_REF = re.compile(r"\binputs\.([A-Za-z_][A-Za-z0-9_-]*)")
_ANY_EXPR = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def _input_value(expr: str, values: Mapping[str, Any]) -> tuple[bool, Any]:
    """(True, value) of an expression that reads only known inputs (`inputs.split && format(
    ...)`); (False, None) when it reads an unknown input or another context."""
    names = _INPUT_REF.findall(expr)
    if not names or any(n not in values for n in names):
        return False, None
    try:
        return True, evaluate(expr, {"inputs": values})
    except UnknownExpression:
        return False, None


def _fill_text(text: str, values: Mapping[str, Any]) -> str:
    def one(m: re.Match[str]) -> str:
        ok, value = _input_value(m.group(1), values)
        if not ok:
            return m.group(0)
        return "" if value is None else value_text(value)

    return _ANY_EXPR.sub(one, text)


def _fill(value: Any, values: Mapping[str, Any]) -> Any:
    """`value` with each expression that reads only known inputs filled in; a string that is
    exactly one such expression becomes its value itself (a number stays a number)."""
    if isinstance(value, str):
        if "${{" not in value:
            return value
        whole = _ANY_EXPR.fullmatch(value.strip())
        if whole:
            ok, result = _input_value(whole.group(1), values)
            if ok:
                return result
        return _fill_text(value, values)
    if isinstance(value, Mapping):
        return {k: _fill(v, values) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill(v, values) for v in value]
    return value


def _known(value: Any, context: Mapping[str, Any]) -> tuple[bool, Any]:
    """(True, value) when `value` is plain or its expressions evaluate from `context` (the
    caller's matrix combination); (False, None) when it needs the run (github.*, needs.*...)."""
    if isinstance(value, (Mapping, list)):
        return False, None
    if not _is_expression(value):
        return True, value
    if not context:
        return False, None
    whole = _EXPR.fullmatch(str(value).strip())
    if whole:
        try:
            return True, evaluate(whole.group(1), context)
        except UnknownExpression:
            return False, None
    rendered = render_expression(str(value), context)
    return ("${{" not in rendered), rendered


def _inputs(
    caller: JobSpec, callee: Workflow, context: Mapping[str, Any]
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """The callee's inputs known before the run: the caller's `with:` values (plain, or from
    its matrix combination), else the callee's plain defaults; and the names given as
    expressions only the run knows (unknown)."""
    on = callee.raw.get("on")
    call = on.get("workflow_call") if isinstance(on, Mapping) else None
    declared = call.get("inputs") if isinstance(call, Mapping) else None
    values: dict[str, Any] = {}
    if isinstance(declared, Mapping):
        for name, decl in declared.items():
            default = decl.get("default") if isinstance(decl, Mapping) else None
            if default is not None and not _is_expression(default):
                values[str(name)] = default
    given = caller.raw.get("with")
    unknown: list[str] = []
    if isinstance(given, Mapping):
        for name, value in given.items():
            ok, known = _known(value, context)
            if not ok:
                unknown.append(str(name))
                values.pop(str(name), None)
            elif known is not None:
                values[str(name)] = known
    return values, tuple(unknown)


def _filled(callee: Workflow, values: Mapping[str, Any]) -> Workflow:
    """The callee with its inputs filled into every job's spec and block."""
    if not values:
        return callee
    jobs = {}
    for key, spec in callee.jobs.items():
        raw = _fill(dict(spec.raw), values)
        jobs[key] = _job_spec(key, raw, spec.line, _fill_text(spec.yaml_block, values))
    return Workflow(callee.name, callee.events, jobs, callee.text, callee.raw)


def _call(
    spec: JobSpec,
    resolve_reusable: Callable[[str], Workflow | None] | None,
    chain: tuple[str, ...],
) -> tuple[Workflow | None, str | None]:
    """The workflow a caller calls, or why it cannot be followed."""
    assert spec.uses is not None
    path = local_callee_path(spec.uses)
    if path is None:
        return None, "outside" if spec.uses.startswith("./") else "remote"
    if resolve_reusable is None:
        return None, "not_read"
    if path in chain:
        return None, "cycle"
    if len(chain) + 1 >= MAX_WORKFLOW_LEVELS:
        return None, "too_deep"
    callee = resolve_reusable(spec.uses)
    return (callee, None) if callee is not None else (None, "missing_callee")


def expand_job(
    spec: JobSpec,
    resolve_reusable: Callable[[str], Workflow | None] | None = None,
    *,
    chain: tuple[str, ...] = (),
) -> list[ExpandedJob]:
    """The jobs GitHub creates for one JobSpec, named as GitHub names them. A matrix given by an
    expression yields one job with matrix None whose name and labels keep their `${{ matrix.* }}`
    templates. `chain` holds the workflow paths already being called (cycles, depth). Raises
    MatrixTooLarge over GitHub's limit of MAX_MATRIX_JOBS."""
    try:
        combos = expand_matrix(spec.matrix)
    except MatrixTooLarge as exc:
        raise MatrixTooLarge(f"job `{spec.key}`: {exc.message}", spec.line) from None
    if combos is None or not combos:
        combos_or_none: list[dict[str, Any] | None] = [None]
    else:
        combos_or_none = list(combos)
    out: list[ExpandedJob] = []
    callee: Workflow | None = None
    problem: str | None = None
    expanded: dict[str, tuple[list[ExpandedJob], tuple[str, ...]]] = {}
    if spec.uses is not None:
        callee, problem = _call(spec, resolve_reusable, chain)
    for combo in combos_or_none:
        # A matrix given by an expression is unknown here: its `${{ matrix.* }}` stay as written.
        context: dict[str, Any] = {"matrix": combo or {}} if combos is not None else {}
        if spec.name is None:
            name = default_job_name(spec.key, combo)
        elif _uses_matrix(spec.name) and combo is not None:
            name = render_expression(spec.name, context)
        else:
            name = default_job_name(render_expression(spec.name, context), combo)
        name = display_name(name)
        labels = _labels(spec.runs_on, context)
        if spec.uses is None:
            out.append(ExpandedJob(spec.key, name, combo, labels, spec, needs=spec.needs))
            continue
        if callee is None:
            out.append(
                ExpandedJob(
                    spec.key,
                    f"{name} / ",
                    combo,
                    labels,
                    spec,
                    callers=(spec,),
                    call_problem=problem,
                    needs=spec.needs,
                )
            )
            continue
        values, unknown = _inputs(spec, callee, context)
        seen = json.dumps(values, sort_keys=True, default=str) + repr(unknown)
        if seen not in expanded:  # one expansion per distinct set of inputs
            path = local_callee_path(spec.uses or "") or ""
            filled = _filled(callee, values)
            expanded[seen] = (
                expand_jobs(filled, resolve_reusable, chain=(*chain, path)),
                unknown,
            )
        inner_jobs, unknown = expanded[seen]
        if len(out) + len(inner_jobs) > MAX_WORKFLOW_JOBS:
            raise MatrixTooLarge(_too_many(spec.key), spec.line)
        for inner in inner_jobs:
            inner_key = job_key_of(inner)
            out.append(
                ExpandedJob(
                    spec.key,
                    f"{name} / {inner.name}",
                    combo or inner.matrix,
                    inner.runner_labels,
                    spec,
                    callee_key=inner_key,
                    callee_if=inner.callee_if or inner.spec.condition,
                    callee=inner.callee if inner.callee is not None else inner.spec,
                    callers=(spec, *inner.callers),
                    call_problem=inner.call_problem,
                    unknown_inputs=unknown + inner.unknown_inputs,
                    needs=(*spec.needs, *(f"{spec.key}/{n}" for n in job_needs(inner))),
                )
            )
    return out


def expand_jobs(
    workflow: Workflow,
    resolve_reusable: Callable[[str], Workflow | None] | None = None,
    *,
    chain: tuple[str, ...] = (),
) -> list[ExpandedJob]:
    """Every job of the workflow, matrix expanded, in file order. `resolve_reusable(uses)` may
    return the called workflow (None: it cannot be read); without it a caller yields one job
    named `caller / ` (prefix). `chain` may start with the workflow's own path. Raises
    MatrixTooLarge past MAX_WORKFLOW_JOBS jobs, counted before each call's jobs are multiplied
    by its caller's matrix."""
    out: list[ExpandedJob] = []
    for spec in workflow.jobs.values():
        jobs = expand_job(spec, resolve_reusable, chain=chain)
        if len(out) + len(jobs) > MAX_WORKFLOW_JOBS:
            raise MatrixTooLarge(_too_many(spec.key), spec.line)
        out.extend(jobs)
    return out


def _too_many(key: str) -> str:
    return (
        f"job `{key}`: the workflow makes more than {MAX_WORKFLOW_JOBS:,} jobs (matrices of "
        f"reusable-workflow calls multiply); a workflow is refused above that"
    )


def job_key_of(job: ExpandedJob) -> str:
    """The job-table `job_key`: the YAML key, `caller/callee` for a job of a called workflow."""
    return job.key if job.callee_key is None else f"{job.key}/{job.callee_key}"


def job_needs(job: ExpandedJob) -> tuple[str, ...]:
    """Keys (job_key_of) the job waits for: its own `needs`, and for a job of a called workflow
    the caller's `needs` plus its `needs` inside the callee."""
    return job.needs if job.needs is not None else job.spec.needs


def job_yaml_of(job: ExpandedJob) -> str:
    """The job's own block; for a job of a called workflow the callee's block (inputs filled),
    under the calling jobs' blocks as comments, so the caller's context stays in view."""
    if job.callee is None or not job.callers:
        return job.spec.yaml_block
    head = [
        "# " + line if line.strip() else "#"
        for caller in job.callers
        for line in caller.yaml_block.rstrip("\n").splitlines()
    ]
    return "\n".join(head) + "\n" + job.callee.yaml_block


_REF = re.compile(r"^(?P<path>.*?\.ya?ml)@(?P<ref>.+)$")


def strip_ref(path: str) -> tuple[str, str | None]:
    """`.github/workflows/ci.yml@main` → (`.github/workflows/ci.yml`, `main`)."""
    m = _REF.match(path)
    return (m.group("path"), m.group("ref")) if m else (path, None)


def runner_os(labels: tuple[str, ...] | list[str]) -> str | None:
    """Linux, Windows or macOS from runs-on labels (hosted, larger and self-hosted), else None."""
    for label in labels:
        low = label.lower()
        if low.startswith(("ubuntu", "linux")) or low in ("linux",):
            return "Linux"
        if low.startswith(("windows", "win")):
            return "Windows"
        if low.startswith(("macos", "mac", "osx")):
            return "macOS"
    return None
