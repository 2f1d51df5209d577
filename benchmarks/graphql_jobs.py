"""Would a GraphQL check-runs route (issue #31, item 3) give the dataset the same rows for fewer
requests? Measured on one simulated world, checked against GitHub's published GraphQL schema.

An Actions job is a check run: GitHub's GraphQL API serves a commit's check suites, their check
runs and their steps in one query, for many commits at once. The REST crawler spends one jobs
listing per run, most of its requests. This script answers the two questions the route must
pass before the crawler offers it as `--jobs-route graphql`:

1. Same rows. The world is dumped as the REST API serves it (`simulate dump`, the bodies the
   simulated server returns) and built; then every job record is cut down to the fields the
   GraphQL types CheckRun and CheckStep have (each mapping checked against the schema; each
   REST field with no GraphQL field is shown with the schema's fields, so the reader can see it
   is absent) and built again. The two datasets are compared row by row on every column.
2. Fewer requests, counting GraphQL points. The query the route would send (aliases over the
   world's commits, `first:` set to the world's largest counts so nothing needs a second page)
   is validated against the schema with graphql-core; its point cost follows GitHub's
   published rule (the requests every connection needs, assuming each fills its `first:`,
   divided by 100, at least 1), and its node count must stay under 500,000.

The crawler's two existing GraphQL queries (blob oids, blob texts) are validated against the
same schema.

    python benchmarks/graphql_jobs.py --schema schema.docs.graphql

GitHub publishes the schema at https://docs.github.com/public/fpt/schema.docs.graphql (also
`schema.graphql` of github.com/octokit/graphql-schema). It is not part of this project. The
last line printed is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import polars as pl
from graphql import GraphQLError, GraphQLObjectType, GraphQLSchema, build_schema, parse, validate

from gharuntime.builder.build import build
from gharuntime.contract import DATASET_LAYOUT, RawKind
from gharuntime.crawler import endpoints as ep
from gharuntime.rawstore import RawStoreWriter, connect_state, iter_records
from gharuntime.sim import Scale, World
from gharuntime.sim.dump import dump_world
from gharuntime.source_kinds.raw import RawSource

# The REST job fields the raw source reads (gharuntime/sources/raw.py, _Reader.job), and the
# GraphQL (type, field) that gives each, or None where no type on the route's path has one.
JOB_FIELDS: dict[str, tuple[str, str] | None] = {
    "id": ("CheckRun", "databaseId"),
    "run_id": ("WorkflowRun", "databaseId"),  # checkSuite.workflowRun
    "run_attempt": None,
    "name": ("CheckRun", "name"),
    "status": ("CheckRun", "status"),  # enum COMPLETED = REST "completed"
    "conclusion": ("CheckRun", "conclusion"),
    "created_at": None,  # when the job was queued: queue_s is started_at - created_at
    "started_at": ("CheckRun", "startedAt"),
    "completed_at": ("CheckRun", "completedAt"),
    "labels": None,  # the runner labels the job asked for (runs-on)
    "steps": ("CheckRun", "steps"),
}
STEP_FIELDS: dict[str, tuple[str, str]] = {
    "name": ("CheckStep", "name"),
    "number": ("CheckStep", "number"),
    "status": ("CheckStep", "status"),
    "conclusion": ("CheckStep", "conclusion"),
    "started_at": ("CheckStep", "startedAt"),
    "completed_at": ("CheckStep", "completedAt"),
}
# where a field with no GraphQL source could have been: every type on the route's path
PATH_TYPES = ("CheckRun", "CheckSuite", "WorkflowRun", "CheckStep")
NODE_LIMIT = 500_000
ALIASES = 100  # commits per query at most, as the crawler's blob queries
# `first:` a crawler must send when it cannot know a world's largest counts beforehand: many
# workflows at one commit, a matrix of up to 256 jobs (100 a page), a job's steps
BLIND_FIRSTS = (20, 100, 50)


def fields_of(schema: GraphQLSchema, name: str) -> list[str]:
    t = schema.get_type(name)
    if not isinstance(t, GraphQLObjectType):
        raise SystemExit(f"the schema has no object type {name}: is it GitHub's schema?")
    return sorted(t.fields)


def check_mapping(schema: GraphQLSchema) -> dict[str, Any]:
    """Every mapped field exists; for each unmapped one, the fields of the path's types."""
    for mapping in (JOB_FIELDS, STEP_FIELDS):
        for rest, target in mapping.items():
            if target and target[1] not in fields_of(schema, target[0]):
                raise SystemExit(f"{target[0]}.{target[1]} (for {rest}) is not in the schema")
    return {t: fields_of(schema, t) for t in PATH_TYPES}


def project(body: dict[str, Any]) -> dict[str, Any]:
    """A REST job body cut down to what the GraphQL route can give."""
    out = {k: body[k] for k, target in JOB_FIELDS.items() if target and k in body}
    if isinstance(body.get("steps"), list):
        out["steps"] = [{k: s.get(k) for k in STEP_FIELDS} for s in body["steps"]]
    return out


def copy_store(src: Path, dst: Path, transform: Any) -> None:
    """The raw store at `src` rewritten at `dst`, job bodies through `transform`, with its
    meta (the build reads the simulated world's identity from it)."""
    con = connect_state(src)
    meta = dict(con.execute("SELECT key, value FROM meta").fetchall())
    con.close()
    writer = RawStoreWriter(dst, meta=meta)
    for rec in iter_records([src]):
        body = transform(rec.body) if rec.kind is RawKind.JOB else rec.body
        writer.add(rec.kind, rec.key, body, rec.repo_id)
        if writer.pending >= 20_000:
            writer.flush()
    writer.close()


def jobs_frame(dataset: Path) -> pl.DataFrame:
    """Every row of the dataset's temporal config (all splits)."""
    files = sorted((dataset / DATASET_LAYOUT.data / "temporal").glob("*.parquet"))
    return pl.concat([pl.read_parquet(f) for f in files], how="vertical_relaxed")


def compare(rest: pl.DataFrame, graphql: pl.DataFrame) -> dict[str, Any]:
    """Rows in one and not the other, and per column the share of common rows that differ."""
    key = "id"
    joined = rest.join(graphql, on=key, how="inner", suffix="__g")
    differ: dict[str, float] = {}
    for c in rest.columns:
        if c == key or f"{c}__g" not in joined.columns:
            continue
        a, b = joined[c], joined[f"{c}__g"]
        same = (a.is_null() & b.is_null()) | (
            a.is_not_null() & b.is_not_null() & (a.hash() == b.hash())
        )
        share = 1.0 - float(same.mean() or 0.0) if joined.height else 0.0
        if share > 0:
            differ[c] = round(share, 4)
    return {
        "rest_rows": rest.height,
        "graphql_rows": graphql.height,
        "rows_only_rest": rest.join(graphql, on=key, how="anti").height,
        "rows_only_graphql": graphql.join(rest, on=key, how="anti").height,
        "common_rows": joined.height,
        "columns_compared": len(rest.columns) - 1,
        "columns_differing": dict(sorted(differ.items(), key=lambda kv: -kv[1])),
    }


def route_query(owner: str, name: str, shas: list[str], suites: int, runs: int, steps: int) -> str:
    """The query the route would send: each commit's Actions check suites (GitHub Actions is
    app 15368), their run and check runs, each check run's steps."""
    step = "name number status conclusion startedAt completedAt"
    run = f"databaseId name status conclusion startedAt completedAt steps(first: {steps}) {{ nodes {{ {step} }} }}"
    suite = (
        f"checkSuites(first: {suites}, filterBy: {{appId: 15368}}) {{ nodes {{ "
        f"workflowRun {{ databaseId runNumber }} checkRuns(first: {runs}) {{ nodes {{ {run} }} }} }} }}"
    )
    commits = " ".join(
        f'c{i}: object(oid: "{sha}") {{ ... on Commit {{ {suite} }} }}'
        for i, sha in enumerate(shas)
    )
    return f'query {{ rateLimit {{ cost }} repository(owner: "{owner}", name: "{name}") {{ {commits} }} }}'


def cost(k: int, suites: int, runs: int, steps: int) -> tuple[int, int]:
    """(points, nodes) of a query over k commits, by GitHub's published rules: connections'
    requests (checkSuites: 1 per commit; checkRuns: 1 per suite; steps: 1 per check run),
    each assumed full, / 100 rounded, at least 1; nodes: every connection's `first:` product."""
    requests = k * (1 + suites + suites * runs)
    nodes = k * (suites + suites * runs + suites * runs * steps)
    return max(1, round(requests / 100)), nodes


def world_counts(raw: Path) -> dict[str, Any]:
    """From the dumped records: commits per repository, and the largest counts the query's
    `first:` arguments must cover."""
    run_sha: dict[int, tuple[int, str]] = {}
    jobs_per_run: Counter[int] = Counter()
    max_steps = 0
    jobs = 0
    for rec in iter_records([raw]):
        if rec.kind is RawKind.RUN:
            run_sha[int(rec.body["id"])] = (int(rec.repo_id or 0), str(rec.body["head_sha"]))
        elif rec.kind is RawKind.JOB:
            jobs += 1
            jobs_per_run[int(rec.body["run_id"])] += 1  # every attempt's check runs
            max_steps = max(max_steps, len(rec.body.get("steps") or []))
    runs_at: Counter[tuple[int, str]] = Counter(run_sha[r] for r in jobs_per_run if r in run_sha)
    commits: dict[int, int] = defaultdict(int)
    for repo, _sha in runs_at:
        commits[repo] += 1
    return {
        "jobs": jobs,
        "runs": len(jobs_per_run),
        "commits": len(runs_at),
        "commits_per_repo": dict(commits),
        "max_suites_per_commit": max(runs_at.values(), default=1),
        "max_jobs_per_run": max(jobs_per_run.values(), default=1),
        "max_steps_per_job": max(max_steps, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--schema", type=Path, required=True, help="GitHub's GraphQL schema (SDL)")
    ap.add_argument("--repos", type=int, default=60, help="repositories of the world")
    ap.add_argument("--seed", type=int, default=11, help="as benchmarks/crawl_requests.py")
    args = ap.parse_args()
    if not args.schema.is_file():
        sys.exit(f"{args.schema}: no such file; download GitHub's public schema (see --help)")
    # GitHub's schema breaks two of graphql-core's schema rules (a few fields defined twice,
    # deprecated fields implementing undeprecated interface fields), so the schema itself is
    # taken as valid; the queries are still validated against it
    try:
        schema = build_schema(
            args.schema.read_text(encoding="utf-8"), assume_valid=True, assume_valid_sdl=True
        )
    except (GraphQLError, TypeError, ValueError) as e:  # a syntax error is a GraphQLError
        sys.exit(f"{args.schema}: not a GraphQL schema: {e}")
    figures: dict[str, Any] = {"repos": args.repos, "seed": args.seed}

    existing = {
        "blob_oids": ep.graphql_blob_query("o", "r", ["HEAD:.github/workflows/ci.yml"]),
        "blob_texts": ep.graphql_blob_text_query("o", "r", ["0" * 40]),
    }
    for label, q in existing.items():
        errors = validate(schema, parse(q))
        figures[f"crawler_{label}_query_valid"] = not errors
        print(f"crawler's {label} query against GitHub's schema: {errors or 'valid'}")

    path_fields = check_mapping(schema)
    missing = [k for k, v in JOB_FIELDS.items() if v is None]
    print("REST job fields the dataset reads with no GraphQL field on the route's path:")
    for k in missing:
        print(f"  {k}")
    for t, names in path_fields.items():
        print(f"  {t} has: {', '.join(names)}")
    figures["job_fields_without_graphql_source"] = missing

    work = Path(tempfile.mkdtemp(prefix="graphql-jobs-"))
    try:
        world = World(seed=args.seed, scale=Scale(args.repos, 2.5, 5.0, 60))
        rest_raw, graphql_raw = work / "rest-raw", work / "graphql-raw"
        dump_world(world, rest_raw)
        copy_store(rest_raw, graphql_raw, project)
        build(RawSource([rest_raw]), work / "rest")
        build(RawSource([graphql_raw]), work / "graphql")
        rows = compare(jobs_frame(work / "rest"), jobs_frame(work / "graphql"))
        figures.update(rows)
        print(
            f"rows: REST {rows['rest_rows']}, GraphQL route {rows['graphql_rows']} "
            f"({rows['rows_only_rest']} only REST, {rows['rows_only_graphql']} only GraphQL); "
            f"columns that differ on common rows (share of rows): {rows['columns_differing']}"
        )

        counts = world_counts(rest_raw)
        s = min(100, counts["max_suites_per_commit"])
        j = min(100, counts["max_jobs_per_run"])
        t = min(100, counts["max_steps_per_job"])
        per_commit_nodes = cost(1, s, j, t)[1]
        k = max(1, min(ALIASES, NODE_LIMIT // per_commit_nodes))
        q = route_query("o", "r", ["0" * 40] * k, s, j, t)
        errors = validate(schema, parse(q))
        if errors:
            sys.exit(f"the route's query is not valid against the schema: {errors}")
        points = queries = 0
        for n in counts["commits_per_repo"].values():
            for start in range(0, n, k):
                size = min(k, n - start)
                queries += 1
                points += cost(size, s, j, t)[0]
        jobs = counts["jobs"]
        blind_points = 0
        bs, bj, bt = BLIND_FIRSTS
        bk = max(1, min(ALIASES, NODE_LIMIT // cost(1, bs, bj, bt)[1]))
        for n in counts["commits_per_repo"].values():
            for start in range(0, n, bk):
                blind_points += cost(min(bk, n - start), bs, bj, bt)[0]
        figures.update(
            blind_firsts=list(BLIND_FIRSTS),
            blind_commits_per_query=bk,
            blind_points_per_job=round(blind_points / jobs, 4),
            world_jobs=jobs,
            world_runs=counts["runs"],
            world_commits=counts["commits"],
            first_suites=s,
            first_check_runs=j,
            first_steps=t,
            commits_per_query=k,
            route_query_valid=True,
            route_queries=queries,
            route_requests_per_job=round(queries / jobs, 4),
            route_points=points,
            route_points_per_job=round(points / jobs, 4),
            rest_jobs_listings_per_job=round(counts["runs"] / jobs, 4),
        )
        print(
            f"route: first: {s} suites, {j} check runs, {t} steps -> {k} commits per query "
            f"(nodes {cost(k, s, j, t)[1]:,} of {NODE_LIMIT:,}); {queries} queries for {jobs} jobs "
            f"= {queries / jobs:.4f} requests/job, but {points} points = {points / jobs:.3f} "
            f"points/job; REST: one jobs listing per run = {counts['runs'] / jobs:.4f} "
            "requests (points) per job"
        )
        print(
            f"route with first: {bs}/{bj}/{bt} (what a crawler must ask without knowing the "
            f"counts): {bk} commits per query, {blind_points / jobs:.3f} points/job"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    same_rows = not figures["columns_differing"] and figures["rows_only_rest"] == 0
    cheaper = figures["route_points_per_job"] < figures["rest_jobs_listings_per_job"]
    figures["same_rows"] = same_rows
    figures["fewer_points"] = cheaper
    figures["offer_route"] = same_rows and cheaper
    print(
        "verdict: "
        + (
            "offer --jobs-route graphql"
            if same_rows and cheaper
            else "do not offer it: "
            + ("the rows differ" if not same_rows else "")
            + (" and " if not same_rows and not cheaper else "")
            + ("it costs more points than REST's requests" if not cheaper else "")
        )
    )
    print(json.dumps(figures, sort_keys=True))


if __name__ == "__main__":
    main()
