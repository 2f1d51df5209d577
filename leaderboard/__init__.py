"""gharuntime.leaderboard: the results registry and its rendered pages."""

__all__: list[str] = []
