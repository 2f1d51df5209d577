"""GitHub's JSON shapes for the simulated world: the same bodies the REST API returns (fields as
in GitHub's OpenAPI description in shared/reference/github-rest/), so the crawler cannot tell the
difference. The server and `simulate dump` both build their records here."""

from __future__ import annotations

import base64
from typing import Any

from gharuntime.sim.world import (
    END,
    Attempt,
    Commit,
    Job,
    RepoWorld,
    Run,
    SimRepo,
    WorkflowFile,
    iso,
)

__all__ = ["WEB_FLOW", "Payloads"]

WEB_FLOW = "web-flow"
"""The account GitHub names as committer of commits made in its web interface."""

_LICENSES = {
    "mit": ("MIT License", "MIT"),
    "apache-2.0": ("Apache License 2.0", "Apache-2.0"),
    "bsd-3-clause": ('BSD 3-Clause "New" or "Revised" License', "BSD-3-Clause"),
    "gpl-3.0": ("GNU General Public License v3.0", "GPL-3.0"),
}


def _node(kind: str, ident: int) -> str:
    return base64.b64encode(f"0{len(kind)}:{kind}{ident}".encode()).decode()


class Payloads:
    """Builds response bodies with URLs under `api` (the server's base URL, or GitHub's)."""

    def __init__(
        self, api: str = "https://api.github.com", web: str = "https://github.com"
    ) -> None:
        self.api = api.rstrip("/")
        self.web = web.rstrip("/")
        self._minimal: dict[int, dict[str, Any]] = {}
        self._users: dict[tuple[str, int, str], dict[str, Any]] = {}

    # ----- accounts and repositories ---------------------------------------------------
    def user(self, login: str, ident: int, kind: str = "User") -> dict[str, Any]:
        key = (login, ident, kind)
        found = self._users.get(key)
        if found is None:
            if len(self._users) > 4096:
                self._users.clear()
            found = self._users[key] = self._user(login, ident, kind)
        return found

    def owner(self, m: SimRepo) -> dict[str, Any]:
        """The account that owns `m`: three repositories per owner, every other one an org."""
        group = m.index // 3
        return self.user(m.owner, 5_000_000 + group, "Organization" if group % 2 else "User")

    def author(self, login: str) -> dict[str, Any]:
        """A commit author or run actor. GitHub types `name[bot]` accounts as Bot."""
        if login == WEB_FLOW:
            return self.user(login, 19864447)
        kind = "Bot" if login.endswith("[bot]") else "User"
        return self.user(login, 7_000_000 + sum(map(ord, login)), kind)

    def public_user(self, summary: dict[str, Any], created_at: int) -> dict[str, Any]:
        """`GET /users/{username}`: the summary plus the profile fields GitHub always sends."""
        when = iso(created_at)
        return {
            **summary,
            "name": None,
            "company": None,
            "blog": "",
            "location": None,
            "email": None,
            "hireable": None,
            "bio": None,
            "twitter_username": None,
            "public_repos": 3 if summary["type"] != "Bot" else 0,
            "public_gists": 0,
            "followers": 0,
            "following": 0,
            "created_at": when,
            "updated_at": when,
        }

    def _user(self, login: str, ident: int, kind: str) -> dict[str, Any]:
        u = f"{self.api}/users/{login}"
        return {
            "login": login,
            "id": ident,
            "node_id": _node(kind, ident),
            "avatar_url": f"https://avatars.githubusercontent.com/u/{ident}?v=4",
            "gravatar_id": "",
            "url": u,
            "html_url": f"{self.web}/{login}",
            "followers_url": f"{u}/followers",
            "following_url": f"{u}/following{{/other_user}}",
            "gists_url": f"{u}/gists{{/gist_id}}",
            "starred_url": f"{u}/starred{{/owner}}{{/repo}}",
            "subscriptions_url": f"{u}/subscriptions",
            "organizations_url": f"{u}/orgs",
            "repos_url": f"{u}/repos",
            "events_url": f"{u}/events{{/privacy}}",
            "received_events_url": f"{u}/received_events",
            "type": kind,
            "site_admin": False,
        }

    def minimal_repository(self, m: SimRepo) -> dict[str, Any]:
        """The `repository` embedded in runs (GitHub's minimal-repository)."""
        cached = self._minimal.get(m.index)
        if cached is not None:
            return cached
        r = f"{self.api}/repos/{m.full_name}"
        body = {
            "id": m.id,
            "node_id": _node("Repository", m.id),
            "name": m.name,
            "full_name": m.full_name,
            "private": m.private,
            "owner": self.owner(m),
            "html_url": f"{self.web}/{m.full_name}",
            "description": m.description,
            "fork": m.fork,
            "url": r,
        }
        for name, tail in (
            ("archive_url", "/{archive_format}{/ref}"),
            ("assignees_url", "/assignees{/user}"),
            ("blobs_url", "/git/blobs{/sha}"),
            ("branches_url", "/branches{/branch}"),
            ("collaborators_url", "/collaborators{/collaborator}"),
            ("comments_url", "/comments{/number}"),
            ("commits_url", "/commits{/sha}"),
            ("compare_url", "/compare/{base}...{head}"),
            ("contents_url", "/contents/{+path}"),
            ("contributors_url", "/contributors"),
            ("deployments_url", "/deployments"),
            ("downloads_url", "/downloads"),
            ("events_url", "/events"),
            ("forks_url", "/forks"),
            ("git_commits_url", "/git/commits{/sha}"),
            ("git_refs_url", "/git/refs{/sha}"),
            ("git_tags_url", "/git/tags{/sha}"),
            ("hooks_url", "/hooks"),
            ("issue_comment_url", "/issues/comments{/number}"),
            ("issue_events_url", "/issues/events{/number}"),
            ("issues_url", "/issues{/number}"),
            ("keys_url", "/keys{/key_id}"),
            ("labels_url", "/labels{/name}"),
            ("languages_url", "/languages"),
            ("merges_url", "/merges"),
            ("milestones_url", "/milestones{/number}"),
            ("notifications_url", "/notifications{?since,all,participating}"),
            ("pulls_url", "/pulls{/number}"),
            ("releases_url", "/releases{/id}"),
            ("stargazers_url", "/stargazers"),
            ("statuses_url", "/statuses/{sha}"),
            ("subscribers_url", "/subscribers"),
            ("subscription_url", "/subscription"),
            ("tags_url", "/tags"),
            ("teams_url", "/teams"),
            ("trees_url", "/git/trees{/sha}"),
        ):
            body[name] = r + tail
        if len(self._minimal) > 4096:
            self._minimal.clear()
        self._minimal[m.index] = body
        return body

    def repository(self, m: SimRepo, *, score: float | None = None) -> dict[str, Any]:
        """GET /repos/{owner}/{repo} (or a search item when `score` is given)."""
        body = dict(self.minimal_repository(m))
        lic = None
        if m.license:
            name, spdx = _LICENSES[m.license]
            lic = {
                "key": m.license,
                "name": name,
                "url": f"{self.api}/licenses/{m.license}",
                "spdx_id": spdx,
                "node_id": _node("License", len(m.license)),
            }
        body.update(
            {
                "clone_url": f"{self.web}/{m.full_name}.git",
                "git_url": f"git://github.com/{m.full_name}.git",
                "ssh_url": f"git@github.com:{m.full_name}.git",
                "svn_url": f"{self.web}/{m.full_name}",
                "mirror_url": None,
                "homepage": None,
                "language": m.language,
                "forks": m.forks,
                "forks_count": m.forks,
                "stargazers_count": m.stars,
                "watchers_count": m.stars,
                "watchers": m.stars,
                "size": m.size_kb,
                "default_branch": m.default_branch,
                "open_issues": m.open_issues,
                "open_issues_count": m.open_issues,
                "is_template": False,
                "topics": list(m.topics),
                "has_issues": True,
                "has_projects": True,
                "has_wiki": True,
                "has_pages": False,
                "has_downloads": True,
                "has_discussions": False,
                "archived": m.archived,
                "disabled": False,
                "visibility": "private" if m.private else "public",
                "pushed_at": iso(m.pushed_at),
                "created_at": iso(m.created_at),
                "updated_at": iso(max(m.pushed_at, END - 86400)),
                "license": lic,
            }
        )
        if score is not None:
            body["score"] = score
        else:
            body["network_count"] = m.forks
            body["subscribers_count"] = max(1, m.stars // 30)
        return body

    # ----- workflows and runs -----------------------------------------------------------
    def workflow(self, m: SimRepo, wf: WorkflowFile) -> dict[str, Any]:
        return {
            "id": wf.id,
            "node_id": _node("Workflow", wf.id),
            "name": wf.name,
            "path": wf.path,
            "state": wf.state,
            "created_at": iso(wf.created_at),
            "updated_at": iso(wf.updated_at),
            "url": f"{self.api}/repos/{m.full_name}/actions/workflows/{wf.id}",
            "html_url": f"{self.web}/{m.full_name}/blob/{m.default_branch}/{wf.path}",
            "badge_url": f"{self.web}/{m.full_name}/workflows/{wf.name.replace(' ', '%20')}/badge.svg",
        }

    def run(self, rw: RepoWorld, run: Run, attempt: Attempt | None = None) -> dict[str, Any]:
        """A run object as of `attempt` (the latest when None)."""
        m = rw.meta
        att = attempt or run.latest
        base = f"{self.api}/repos/{m.full_name}/actions/runs/{run.id}"
        author = run.commit.author
        actor = self.author(author)
        repo = self.minimal_repository(m)
        prs: list[dict[str, Any]] = []
        if run.pr_number is not None:
            head_ref = {"id": m.id, "url": repo["url"], "name": m.name}
            prs.append(
                {
                    "id": 900_000_000 + run.pr_number,
                    "number": run.pr_number,
                    "url": f"{repo['url']}/pulls/{run.pr_number}",
                    "head": {"ref": run.branch, "sha": run.commit.sha, "repo": head_ref},
                    "base": {"ref": m.default_branch, "sha": rw.commits[0].sha, "repo": head_ref},
                }
            )
        body: dict[str, Any] = {
            "id": run.id,
            "name": run.workflow.name,
            "node_id": _node("WorkflowRun", run.id),
            "check_suite_id": run.id + 3_000_000_000 + att.number,
            "check_suite_node_id": _node("CheckSuite", run.id + att.number),
            "head_branch": run.branch,
            "head_sha": run.commit.sha,
            "path": run.path,
            "display_title": run.commit.message.splitlines()[0],
            "run_number": run.number,
            "event": run.event,
            "status": att.status,
            "conclusion": att.conclusion,
            "workflow_id": run.workflow.id,
            "url": base,
            "html_url": f"{self.web}/{m.full_name}/actions/runs/{run.id}",
            "pull_requests": prs,
            "created_at": iso(run.created),
            "updated_at": iso(att.updated),
            "actor": actor,
            "triggering_actor": actor,
            "run_attempt": att.number,
            "referenced_workflows": [],
            "run_started_at": iso(att.started),
            "jobs_url": f"{base}/jobs",
            "logs_url": f"{base}/logs",
            "check_suite_url": f"{self.api}/repos/{m.full_name}/check-suites/{run.id + 3_000_000_000 + att.number}",
            "artifacts_url": f"{base}/artifacts",
            "cancel_url": f"{base}/cancel",
            "rerun_url": f"{base}/rerun",
            "previous_attempt_url": f"{base}/attempts/{att.number - 1}" if att.number > 1 else None,
            "workflow_url": f"{self.api}/repos/{m.full_name}/actions/workflows/{run.workflow.id}",
            "head_commit": self.head_commit(run.commit),
            "repository": repo,
            "head_repository": repo,
        }
        if any("/" in j.key for j in att.jobs):
            body["referenced_workflows"] = [
                {
                    "path": f"{m.full_name}/.github/workflows/reusable-build.yml@{run.commit.sha}",
                    "sha": run.commit.sha,
                }
            ]
        return body

    @staticmethod
    def head_commit(c: Commit) -> dict[str, Any]:
        email = f"{c.author.replace('[bot]', '')}@users.noreply.github.com"
        return {
            "id": c.sha,
            "tree_id": c.tree,
            "message": c.message,
            "timestamp": iso(c.time),
            "author": {"name": c.author, "email": email},
            "committer": {"name": "GitHub", "email": "noreply@github.com"},
        }

    def job(self, rw: RepoWorld, run: Run, job: Job) -> dict[str, Any]:
        m = rw.meta
        tz = m.step_tz
        steps = [
            {
                "name": s.name,
                "status": s.status,
                "conclusion": s.conclusion,
                "number": s.number,
                "started_at": iso(s.started, tz, tz != 0) if s.started is not None else None,
                "completed_at": iso(s.completed, tz, tz != 0) if s.completed is not None else None,
            }
            for s in job.steps
        ]
        return {
            "id": job.id,
            "run_id": run.id,
            "workflow_name": run.workflow.name,
            "head_branch": run.branch,
            "run_url": f"{self.api}/repos/{m.full_name}/actions/runs/{run.id}",
            "run_attempt": job.run_attempt,
            "node_id": _node("CheckRun", job.id),
            "head_sha": run.commit.sha,
            "url": f"{self.api}/repos/{m.full_name}/actions/jobs/{job.id}",
            "html_url": f"{self.web}/{m.full_name}/actions/runs/{run.id}/job/{job.id}",
            "status": job.status,
            "conclusion": job.conclusion,
            "created_at": iso(job.created),
            "started_at": iso(job.started),
            "completed_at": iso(job.completed) if job.status == "completed" else None,
            "name": job.name,
            "steps": steps,
            "check_run_url": f"{self.api}/repos/{m.full_name}/check-runs/{job.id}",
            "labels": list(job.labels),
            "runner_id": job.runner_id,
            "runner_name": job.runner_name,
            "runner_group_id": job.runner_group_id,
            "runner_group_name": job.runner_group_name,
        }

    # ----- contents and commits ---------------------------------------------------------
    def content(self, m: SimRepo, path: str, text: str, blob: str, ref: str) -> dict[str, Any]:
        raw = base64.b64encode(text.encode()).decode()
        wrapped = "\n".join(raw[i : i + 60] for i in range(0, len(raw), 60)) + "\n"
        self_url = f"{self.api}/repos/{m.full_name}/contents/{path}?ref={ref}"
        git_url = f"{self.api}/repos/{m.full_name}/git/blobs/{blob}"
        html = f"{self.web}/{m.full_name}/blob/{ref}/{path}"
        return {
            "type": "file",
            "encoding": "base64",
            "size": len(text.encode()),
            "name": path.rsplit("/", 1)[-1],
            "path": path,
            "content": wrapped,
            "sha": blob,
            "url": self_url,
            "git_url": git_url,
            "html_url": html,
            "download_url": f"https://raw.githubusercontent.com/{m.full_name}/{ref}/{path}",
            "_links": {"self": self_url, "git": git_url, "html": html},
        }

    def commit(self, rw: RepoWorld, c: Commit) -> dict[str, Any]:
        m = rw.meta
        r = f"{self.api}/repos/{m.full_name}"
        person = {
            "name": c.author,
            "email": f"{c.author}@users.noreply.github.com",
            "date": iso(c.time),
        }
        files = []
        for path in c.changed:
            found = rw.file_at(path, c.sha)
            blob = found[1] if found else "0" * 40
            files.append(
                {
                    "sha": blob,
                    "filename": path,
                    "status": "added" if c.index == 0 else "modified",
                    "additions": 3,
                    "deletions": 0 if c.index == 0 else 1,
                    "changes": 4,
                    "blob_url": f"{self.web}/{m.full_name}/blob/{c.sha}/{path}",
                    "raw_url": f"{self.web}/{m.full_name}/raw/{c.sha}/{path}",
                    "contents_url": f"{r}/contents/{path}?ref={c.sha}",
                }
            )
        parents = [] if c.index == 0 else [rw.commits[c.index - 1]]
        return {
            "url": f"{r}/commits/{c.sha}",
            "sha": c.sha,
            "node_id": _node("Commit", c.index),
            "html_url": f"{self.web}/{m.full_name}/commit/{c.sha}",
            "comments_url": f"{r}/commits/{c.sha}/comments",
            "commit": {
                "url": f"{r}/git/commits/{c.sha}",
                "author": person,
                "committer": person,
                "message": c.message,
                "comment_count": 0,
                "tree": {"sha": c.tree, "url": f"{r}/git/trees/{c.tree}"},
            },
            "author": self.author(c.author),
            "committer": self.author(WEB_FLOW),
            "parents": [
                {
                    "sha": p.sha,
                    "url": f"{r}/commits/{p.sha}",
                    "html_url": f"{self.web}/{m.full_name}/commit/{p.sha}",
                }
                for p in parents
            ],
            "stats": {
                "additions": 3 * len(files),
                "deletions": len(files),
                "total": 4 * len(files),
            },
            "files": files,
        }
