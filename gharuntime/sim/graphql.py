"""The two GraphQL shapes the crawler sends, as aliased fields of `repository(owner, name)`:
blob ids of a workflow file at many commits (`object(expression: "SHA:PATH") { ... on Blob
{ oid } }`), and the text of many blobs by id (`object(oid: "OID") { ... on Blob { oid byteSize
isBinary isTruncated text } }`). A small scanner, not a GraphQL implementation: it answers every
field of its shape whatever the selection says, and anything else is an error."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from gharuntime.errors import GharuntimeError

__all__ = ["GraphQLError", "answer"]

_TOKEN = re.compile(
    r"""(?:(?P<alias>[A-Za-z_]\w*)\s*:\s*)?(?:
        repository\s*\(\s*owner\s*:\s*"(?P<owner>[^"]*)"\s*,\s*name\s*:\s*"(?P<name>[^"]*)"\s*\)
      | object\s*\(\s*expression\s*:\s*"(?P<expr>[^"]*)"\s*\)
      | object\s*\(\s*oid\s*:\s*"(?P<oid>[^"]*)"\s*\)
    )""",
    re.X,
)


class GraphQLError(GharuntimeError, ValueError):
    """A query this server does not understand."""


def answer(
    query: str,
    blob: Callable[[str, str, str], tuple[bool, str | None]],
    text: Callable[[str, str], str | None] = lambda _repo, _oid: None,
    text_limit: int | None = None,
) -> dict[str, Any]:
    """`blob(full_name, sha, path)` → (repository visible, blob oid or None); `text(full_name,
    oid)` → the blob's text or None when the repository holds no such blob; a text over
    `text_limit` bytes is cut there and marked `isTruncated`. Returns the
    response body {"data": ..., "errors": [...]}."""
    data: dict[str, Any] = {}
    errors: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    repo_name = ""
    found = False
    for m in _TOKEN.finditer(query):
        if m.group("owner") is not None:
            found = True
            alias = m.group("alias") or "repository"
            repo_name = f"{m.group('owner')}/{m.group('name')}"
            visible, _ = blob(repo_name, "", "")
            if not visible:
                data[alias] = None
                errors.append(
                    {
                        "type": "NOT_FOUND",
                        "path": [alias],
                        "message": f"Could not resolve to a Repository with the name '{repo_name}'.",
                    }
                )
                current = None
                repo_name = ""
                continue
            current = data.setdefault(alias, {})
        else:
            if not repo_name:
                if current is None and found:
                    continue  # inside a repository that was not found
                raise GraphQLError("object() outside repository(owner:, name:)")
            assert current is not None
            if m.group("oid") is not None:
                oid = m.group("oid")
                found_text = text(repo_name, oid)
                if found_text is None:
                    current[m.group("alias") or "object"] = None
                    continue
                raw = found_text.encode()
                cut = text_limit is not None and len(raw) > text_limit
                current[m.group("alias") or "object"] = {
                    "oid": oid,
                    "byteSize": len(raw),
                    "isBinary": False,
                    "isTruncated": cut,
                    "text": raw[:text_limit].decode(errors="ignore") if cut else found_text,
                }
                continue
            sha, sep, path = m.group("expr").partition(":")
            if not sep:
                raise GraphQLError(f"expression {m.group('expr')!r} is not SHA:PATH")
            _, oid = blob(repo_name, sha, path)
            current[m.group("alias") or "object"] = {"oid": oid} if oid else None
    if not found:
        raise GraphQLError(
            "only repository(owner:, name:) { object(expression:) } queries are served"
        )
    body: dict[str, Any] = {"data": data}
    if errors:
        body["errors"] = errors
    return body
