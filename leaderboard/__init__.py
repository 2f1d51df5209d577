"""gharuntime.leaderboard: the results registry and its rendered pages.

from gharuntime.leaderboard import build_leaderboard, add_result

add_result(Path("lgb.result.json"), Path("leaderboard/results"))   # validated, filed
board = build_leaderboard(Path("leaderboard/results"), Path("leaderboard"))  # README.md, index.html
"""

from gharuntime.leaderboard.outputs import Leaderboard, build_leaderboard
from gharuntime.leaderboard.rank import GROUP_MEANING, Ranked, rank_table
from gharuntime.leaderboard.registry import (
    RESULT_VERSION,
    Entry,
    LeaderboardError,
    Table,
    add_result,
    load_result,
    scan,
)

__all__ = [
    "GROUP_MEANING",
    "RESULT_VERSION",
    "Entry",
    "Leaderboard",
    "LeaderboardError",
    "Ranked",
    "Table",
    "add_result",
    "build_leaderboard",
    "load_result",
    "rank_table",
    "scan",
]
