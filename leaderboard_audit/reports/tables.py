"""Compatibility: the table model moved below the checks, to ``leaderboard_audit.checks.tables``
(third-party checks may still import it from here)."""

from ..checks.tables import *  # noqa: F403 - the same names, one list (tables_model.__all__)
from ..checks.tables import __all__  # noqa: F401
