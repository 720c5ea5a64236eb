"""The one error the collector raises for bad input: a spec, an output folder, a model name.

The command line prints it as one line (exit 4) and ``pytest --audit-collect``
turns it into a usage error; neither shows a traceback.
"""

from __future__ import annotations

import re
from pathlib import Path


class CollectError(ValueError):
    """Bad collector input, naming the file (and line where known) and the fix."""

    def __init__(self, where: str | Path, message: str, *, line: int | None = None, fix: str | None = None) -> None:
        self.where, self.line, self.fix, self.message = str(where), line, fix, message
        loc = f"{where}:{line}" if line else str(where)
        super().__init__(f"{loc}: {message}" + (f"\n  fix: {fix}" if fix else ""))


def line_of_key(text: str, key: str, start: int = 0) -> int | None:
    """1-based line where a TOML ``key = ...`` (or ``[key]``) first appears, or None."""
    pat = re.compile(rf'^\s*(?:"{re.escape(key)}"|{re.escape(key)})\s*=|^\s*\[+\s*{re.escape(key)}\s*\]+', re.MULTILINE)
    m = pat.search(text, start)
    return text.count("\n", 0, m.start()) + 1 if m else None


def line_of_value(text: str, value: str) -> int | None:
    """1-based line of the first quoted occurrence of ``value``, or None."""
    for q in ('"', "'"):
        i = text.find(q + value + q)
        if i >= 0:
            return text.count("\n", 0, i) + 1
    return None
