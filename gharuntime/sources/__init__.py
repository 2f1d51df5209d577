"""Readers of the build's sources: raw stores (crawl, `simulate dump`) and the GHALogs dump."""

__all__: list[str] = []
