"""Small formatting helpers shared by the renderers."""

from __future__ import annotations

import unicodedata
from typing import Any


def clean(s: Any, width: int | None = None) -> str:
    """A name safe for a terminal cell: control characters shown escaped, long names cut."""
    text = str(s)
    if not (text.isascii() and text.isprintable()):  # printable ASCII has no category C character
        text = "".join(ch if unicodedata.category(ch)[0] != "C" else repr(ch)[1:-1] for ch in text)
    if width is not None and len(text) > width:
        text = text[: width - 1] + "…"
    return text


def is_format_char(ch: str) -> bool:
    """Invisible format characters (Unicode Cf: bidi overrides and isolates, zero-width joiners)
    that can reorder or hide the text around them (B20)."""
    return unicodedata.category(ch) == "Cf"


def num(x: Any, nd: int = 3) -> str:
    if x is None:
        return "n/a"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return str(x)
    return f"{x:.{nd}f}"


def signed(x: Any, nd: int = 3) -> str:
    return "n/a" if x is None else f"{x:+.{nd}f}"


def ci_text(ci: Any, nd: int = 3) -> str:
    return "n/a" if ci is None else f"[{ci[0]:.{nd}f}, {ci[1]:.{nd}f}]"
