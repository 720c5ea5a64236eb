"""Safe decoding of values that evaluation harnesses write as strings.

lm-evaluation-harness writes response values (and in older versions metrics) as
strings: ``"1.0"``, ``"['-29.625', 'False']"``, ``"[invalid]"``. They are decoded
with :func:`json.loads` or :func:`ast.literal_eval` only -- never ``eval`` or
``pickle`` -- and strings longer than ``MAX_LITERAL`` are left as they are.
"""

from __future__ import annotations

import ast
import json
import math
import re
from typing import Any

MAX_LITERAL = 1 << 20
_LETTER = re.compile(r"^\(?\s*([A-Za-z])\s*[\).:]?$")


def literal(v: Any) -> Any:
    """Decode a string that holds a JSON/Python literal; anything else as is."""
    if not isinstance(v, str):
        return v
    s = v.strip()
    if not s or len(s) > MAX_LITERAL:
        return v
    try:
        return json.loads(s)
    except (ValueError, RecursionError):
        pass
    if s[0] in "[({'\"" or s in ("True", "False", "None"):
        try:
            return ast.literal_eval(s)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            return v
    return v


def show(v: Any, limit: int = 80) -> str:
    """``repr(v)`` cut to ``limit`` characters; a value nested too deeply to print says so."""
    try:
        text = repr(v)
    except RecursionError:
        return "<a value nested too deeply to show>"
    return text if len(text) <= limit else text[:limit] + "..."


def json_safe(v: Any) -> bool:
    """True when ``v`` can be written as JSON (not nested past the interpreter's recursion limit)."""
    try:
        json.dumps(v)
    except (RecursionError, ValueError, TypeError):
        return False
    return True


def deep_literal(v: Any, depth: int = 0) -> Any:
    """:func:`literal` applied through nested lists/tuples (bounded depth)."""
    v = literal(v)
    if depth < 6 and isinstance(v, (list, tuple)):
        return [deep_literal(x, depth + 1) for x in v]
    return v


def to_number(v: Any) -> float | None:
    """A finite float from a number, a bool or a numeric string; else None."""
    v = literal(v)
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)):
        f = float(v)
        return f if math.isfinite(f) else None
    return None


def to_bit(v: Any) -> int | None:
    """0/1 from 0, 1, 0.0, 1.0, "1.0", true/false, "True"; None for anything else."""
    f = to_number(v)
    if f is None or f not in (0.0, 1.0):
        return None
    return int(f)


def letter_index(text: Any, n_options: int | None) -> int | None:
    """Index of an answer letter (``"C"``, ``"(c)"``, ``"C."``) within ``n_options``."""
    if not isinstance(text, str):
        return None
    m = _LETTER.match(text.strip())
    if not m:
        return None
    i = ord(m.group(1).upper()) - ord("A")
    if n_options is not None and not 0 <= i < n_options:
        return None
    return i


def answer_index(text: Any, options: list[str] | None) -> int | None:
    """Parse a generated answer: a letter, or exactly one option's text; None if neither."""
    if isinstance(text, (list, tuple)):
        text = text[0] if len(text) == 1 else None
    if not isinstance(text, str):
        return None
    i = letter_index(text, len(options) if options else None)
    if i is not None:
        return i
    if options:
        norm = text.strip().lower()
        hits = [j for j, o in enumerate(options) if o.strip().lower() == norm]
        if len(hits) == 1:
            return hits[0]
    return None


_KEY_BAD = re.compile(r"[^A-Za-z0-9._:=+@-]+")


def sanitize_key(name: str) -> str:
    """A config key from a free name: path separators become ':', other odd runs '_'."""
    s = name.strip().strip("/").replace("/", ":").replace("\\", ":").replace("|", ":")
    s = _KEY_BAD.sub("_", s).strip("_")
    return s or "run"
