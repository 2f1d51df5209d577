"""The `gharuntime` command line: thin click wiring over the library, one module per command."""

__all__: list[str] = []
