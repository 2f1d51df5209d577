"""Readers of the build's sources: raw stores (crawl, `simulate dump`), the GHALogs dump and API
JSON. Each gives the build the same shape (`Candidates`) through a `Source` (see base)."""

from gharuntime.sources.base import Candidates, Source

__all__ = ["Candidates", "Source"]
