"""The `leaderboard-audit` command line: one module per command, ``main`` dispatches."""

from .main import main

__all__ = ["main"]
