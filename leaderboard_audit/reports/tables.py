"""Compatibility: the table model moved below the checks, to ``leaderboard_audit.tables_model``
(third-party checks may still import it from here)."""

from ..tables_model import *  # noqa: F403 - the same names, one list (tables_model.__all__)
from ..tables_model import __all__  # noqa: F401
