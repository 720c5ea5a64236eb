"""Counted nouns and name lists, so no report prints "(1 items)" or "entr(ies)"."""

from __future__ import annotations

from collections.abc import Sequence

IRREGULAR = {"entry": "entries", "copy": "copies", "axis": "axes"}


def plural(n: int, noun: str) -> str:
    if n == 1:
        return noun
    return IRREGULAR.get(noun, noun + "s")


def count(n: int, noun: str) -> str:
    """``count(1, "item")`` -> "1 item"; ``count(3, "entry")`` -> "3 entries"."""
    return f"{n:,} {plural(n, noun)}"


def names_list(names: Sequence[str], shown: int) -> str:
    """The first ``shown`` names, then "and N more"."""
    head = ", ".join(str(n) for n in names[:shown])
    rest = len(names) - shown
    return head + (f" and {rest:,} more" if rest > 0 else "")


__all__ = ["count", "names_list", "plural"]
