"""What kind of answer a generation is: ``letter``, ``enumeration``, ``refusal``, ``empty`` or ``other``.

The paper scores a generation by the first label its parse regex finds, so
``" A, B, C, D"`` (every label, no choice) counts as answering A. The class keeps
that apart (docs/collect.md, "Answer classes"):

* ``empty``: nothing but whitespace;
* ``enumeration``: the answer's first non-blank line opens with two or more
  distinct labels joined only by punctuation, ``or``/``and`` or a range dash
  (``" A, B, C, D"``, ``" 1-4"``, ``" A) B) C) D)"``, ``"\\nA. B. C. D"``);
* ``letter``: otherwise, the label style's parse regex finds a label (the paper's rule);
* ``refusal``: no label, and an explicit refusal (``I cannot``, ``I'm sorry``, ``as an AI``, ...);
* ``other``: anything else (prose, an echoed prompt, a label outside the range shown).

``parse = "strict"`` in the spec scores enumerations unparseable (``pred`` null);
the default (``"paper"``) keeps the paper's first-match rule for the bit.
"""

from __future__ import annotations

import re

from .harness import LabelStyle

CLASSES = ("letter", "enumeration", "refusal", "empty", "other")
PARSE_RULES = ("paper", "strict")

_TOKEN = re.compile(r"\w+|[^\w\s]")
_JOINERS = frozenset({"OR", "AND"})
_REFUSAL = re.compile(
    r"\b(i\s*(?:cannot|can't|can not|am unable|'m unable|won't|will not|don't know|do not know)"
    r"|i'?m sorry|sorry, |as an ai\b|unable to (?:answer|determine|help)|cannot be determined)",
    re.IGNORECASE,
)


def leading_labels(style: LabelStyle, output: str) -> list[str]:
    """Labels opening the first line of ``output`` that holds a letter or digit, joined only by
    punctuation or 'or'/'and' (the scan stops at any other word): ``" A, B, C, D"`` -> A B C D,
    ``" (D).\n(A) You"`` -> D (a second line echoing an option is not an enumeration).
    Labels are matched as written (not uppercased), so the article in ``"(D) a single"`` is no label."""
    s = next((ln for ln in output.split("\n") if any(ch.isalnum() for ch in ln)), "")
    labels = set(style.labels)
    out: list[str] = []
    for tok in _TOKEN.findall(s):
        if tok in labels:
            out.append(tok)
        elif tok.upper() in _JOINERS or not (tok[0].isalnum() or tok[0] == "_"):
            continue
        else:
            break
    return out


def answer_class(style: LabelStyle, output: str) -> str:
    """The class of one generated answer under its configuration's label style."""
    if not output.strip():
        return "empty"
    if len(set(leading_labels(style, output))) >= 2:
        return "enumeration"
    if style.parse(output) is not None:
        return "letter"
    if _REFUSAL.search(output):
        return "refusal"
    return "other"
