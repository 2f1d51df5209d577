"""Readers of the build's sources: raw stores (crawl, `simulate dump`), the GHALogs dump and API
JSON. Each gives the build the same shape (`Candidates`) through a `Source` (see base). The
kinds a person names with `gharuntime build --source` (a typed config each) are in
`gharuntime.source_kinds`, whose `SOURCES` is the one registry."""

from gharuntime.sources.base import Candidates, Source

__all__ = ["Candidates", "Source"]
