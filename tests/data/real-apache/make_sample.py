"""Rebuild this sample from clones of the four repositories (see README.md here):

    python tests/data/real-apache/make_sample.py --ozone-results OZONE_RESULTS_GIT \
        --ratis-results RATIS_RESULTS_GIT --ozone OZONE_GIT --ratis RATIS_GIT

Copies the job.json/run.json files of the chosen run folders byte for byte (from each results
repository's HEAD) into results/<source>/, and, for every head_sha of the chosen runs, the few git
objects that reading `.github/workflows` at that commit needs (the commit, its root tree, the
.github and .github/workflows trees and the workflow blobs) into yaml/<project>.git as loose
objects: a partial object store in which exactly those reads work.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import zlib
from pathlib import Path

HERE = Path(__file__).resolve().parent

# Chosen to cover every case the importer meets in these archives.
OZONE_RUNS = [
    "2019/12/12/141",  # oldest: run without `path`, workflow found by its name
    "2020/01/22/381",  # head_sha missing from apache/ozone's history
    "2020/02/10/453",  # run without `name` or `path`: found by the workflow id's known path
    "2020/03/19/625",  # job.json without run.json (jobs without a run record)
    "2020/05/13/873",  # recorded as apache/hadoop-ozone (the repository's earlier name)
    "2021/09/21/10417",  # labels and runner names, run_attempt 1, no `path`
    "2021/12/18/12170",  # run_attempt 2
    "2022/05/09/14915",  # run with `path`
    "2023/01/02/19318",  # reusable workflow callers ("CI / basic")
]
RATIS_RUNS = [
    "2022/04/06/1192",  # first archived run
    "2023/02/23/2170",  # run_attempt 3
    "2025/01/02/3717",
    "2025/10/10/267",  # post-commit.yaml era, run_attempt 5
    "2026/07/25/1031",  # head_sha missing from apache/ratis's history
]


def git(gd: Path, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(
        ["git", f"--git-dir={gd}", *args], input=data, capture_output=True, check=True
    ).stdout


def copy_object(src: Path, dst: Path, sha: str) -> None:
    kind = git(src, "cat-file", "-t", sha).decode().strip()
    body = git(src, "cat-file", kind, sha)
    raw = f"{kind} {len(body)}\0".encode() + body
    path = dst / "objects" / sha[:2] / sha[2:]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(zlib.compress(raw, 9))


def partial_store(src: Path, dst: Path, shas: list[str]) -> list[str]:
    """Loose objects for reading .github/workflows at each commit; HEAD → the last one."""
    if dst.exists():
        shutil.rmtree(dst)
    (dst / "refs" / "heads").mkdir(parents=True)
    (dst / "HEAD").write_text("ref: refs/heads/main\n")
    found = []
    for sha in shas:
        kind = subprocess.run(
            ["git", f"--git-dir={src}", "cat-file", "-t", sha + "^{commit}"], capture_output=True
        )
        if kind.returncode != 0:
            continue
        found.append(sha)
        copy_object(src, dst, sha)
        tree = git(src, "rev-parse", sha + "^{tree}").decode().strip()
        copy_object(src, dst, tree)
        for sub in (".github", ".github/workflows"):
            t = git(src, "rev-parse", f"{sha}:{sub}").decode().strip()
            copy_object(src, dst, t)
        for line in git(src, "ls-tree", sha, ".github/workflows/").decode().splitlines():
            meta, _, _ = line.partition("\t")
            copy_object(src, dst, meta.split()[2])
        for name in ("LICENSE", "LICENSE.txt", "LICENSE.md", "COPYING"):
            lic = subprocess.run(
                ["git", f"--git-dir={src}", "rev-parse", f"{sha}:{name}"], capture_output=True
            )
            if lic.returncode == 0:
                copy_object(src, dst, lic.stdout.decode().strip())
    (dst / "refs" / "heads" / "main").write_text(found[-1] + "\n")
    return found


def main() -> None:
    ap = argparse.ArgumentParser()
    for name in ("ozone-results", "ratis-results", "ozone", "ratis"):
        ap.add_argument(f"--{name}", type=Path, required=True)
    a = ap.parse_args()
    for label, results, project, runs in (
        ("elek+ozone-build-results", a.ozone_results, a.ozone, OZONE_RUNS),
        ("adoroszlai+ratis-build-results", a.ratis_results, a.ratis, RATIS_RUNS),
    ):
        out = HERE / "results" / label
        if out.exists():
            shutil.rmtree(out)
        shas: list[str] = []
        for run in runs:
            folder = run
            for name in ("job.json", "run.json"):
                try:
                    data = git(results, "show", f"HEAD:{folder}/{name}")
                except subprocess.CalledProcessError:
                    continue
                (out / folder).mkdir(parents=True, exist_ok=True)
                (out / folder / name).write_bytes(data)
                doc = json.loads(data)
                for job in doc.get("jobs", []) if name == "job.json" else [doc]:
                    if job.get("head_sha") and job["head_sha"] not in shas:
                        shas.append(job["head_sha"])
        project_name = label.split("+")[1].removesuffix("-build-results")
        found = partial_store(project, HERE / "yaml" / f"{project_name}.git", shas)
        print(label, "runs", len(runs), "head_shas", len(shas), "in history", len(found))


if __name__ == "__main__":
    main()
