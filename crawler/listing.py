"""Paging through a GitHub listing and reading a failed response's message."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from requests.utils import parse_header_links

from gharuntime.crawler.client import GitHubClient, Response

__all__ = ["pages", "response_message"]


def pages(client: GitHubClient, path: str, params: dict[str, Any], **kw: Any) -> Iterator[Response]:
    """The pages of a listing, following `Link: rel="next"`."""
    resp = client.get(path, params, **kw)
    yield resp
    while resp.status == 200:
        nxt = _next_link(resp)
        if nxt is None:
            return
        resp = client.get(nxt, **kw)
        yield resp


def _next_link(resp: Response) -> str | None:
    link = resp.headers.get("Link")
    if not link:
        return None
    for item in parse_header_links(link):
        if item.get("rel") == "next" and item.get("url"):
            return item["url"]
    return None


def response_message(resp: Response) -> str:
    """What a failed response says went wrong, for an error record."""
    if isinstance(resp.body, dict) and "message" in resp.body:
        return str(resp.body["message"])
    return f"HTTP {resp.status}"
