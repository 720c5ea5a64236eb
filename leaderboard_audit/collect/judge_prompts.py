"""Judge prompts and verdict parsing for the judge stage (collect/judge.py, docs/collect.md,
"Judge stage").

A judge prompt shows the question and two answers, Assistant A's and Assistant B's, and
asks for a verdict label on its scale:

* ``arena-hard`` (5-way): Arena-Hard-Auto's pairwise prompt (lmarena/arena-hard-auto,
  judge_config ``system_prompt`` and ``prompt_template``), condensed: the instruction to
  write an answer of its own first is left out, as tiny judges spend their whole budget on
  it. Labels ``[[A>>B]]``, ``[[A>B]]``, ``[[A=B]]``, ``[[B>A]]``, ``[[B>>A]]``.
* ``arena-hard-verdict-first`` (5-way): the same prompt with the judge's turn prefilled
  ``My final verdict is [[``, so the label comes first and unexplained (the verdict is
  read from the prefill and what follows; tiny judges then give a label nearly always).
* ``mt-bench-pair`` (3-way): MT-Bench's ``pair-v2`` prompt (lm-sys/FastChat,
  ``fastchat/llm_judge/data/judge_prompts.jsonl``). Labels ``[[A]]``, ``[[B]]``, ``[[C]]``
  (a tie).

Every verdict is stored as an Arena-Hard label (``A>B`` ...), the judged answer's position
being the game's (game 1: the baseline is A). :func:`parse_verdict` reads a judge's text:
the bracketed labels first, then bare labels (``A>B``, ``B<A``), then plain phrases
("Assistant B is better", "tie"). When a rule finds two different verdicts (a tiny judge
echoing the prompt's list of labels) or no rule finds any, the text is unparsed, with its
reason (``conflict``, ``none``, ``empty``); the stage counts and reports those, never drops
them silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LABELS_5WAY = ("A>>B", "A>B", "A=B", "B>A", "B>>A")
#: how a verdict was read; the first three are parsed, the rest are not
PARSE_CLASSES = ("bracketed", "bare", "phrase", "conflict", "none", "empty")


@dataclass(frozen=True)
class JudgePrompt:
    name: str
    scale: str  # "5way" | "3way": the labels the prompt asks for
    system: str
    template: str  # with {question}, {answer_a}, {answer_b}
    source: str
    prefill: str = ""  # the start of the judge's turn, given: its verdict is read from prefill + output

    def render(self, question: str, answer_a: str, answer_b: str) -> str:
        return self.template.format(question=question, answer_a=answer_a, answer_b=answer_b)


ARENA_HARD = JudgePrompt(
    "arena-hard",
    "5way",
    "Please act as an impartial judge and evaluate the quality of the responses provided by two AI "
    "assistants to the user prompt displayed below. You will be given assistant A's answer and "
    "assistant B's answer. Your job is to evaluate which assistant's answer is better.\n\n"
    "When evaluating the assistants' answers, identify any mistakes or inaccurate information. Consider "
    "if the assistant's answers are helpful, relevant, and concise.\n\n"
    "After providing your explanation, you must output only one of the following choices as your final "
    "verdict with a label:\n\n"
    "1. Assistant A is significantly better: [[A>>B]]\n"
    "2. Assistant A is slightly better: [[A>B]]\n"
    "3. Tie, relatively the same: [[A=B]]\n"
    "4. Assistant B is slightly better: [[B>A]]\n"
    "5. Assistant B is significantly better: [[B>>A]]\n\n"
    'Example output: "My final verdict is tie: [[A=B]]".',
    "<|User Prompt|>\n{question}\n\n<|The Start of Assistant A's Answer|>\n{answer_a}\n"
    "<|The End of Assistant A's Answer|>\n\n<|The Start of Assistant B's Answer|>\n{answer_b}\n"
    "<|The End of Assistant B's Answer|>",
    "Arena-Hard-Auto v0.1 judge prompt (lmarena/arena-hard-auto), condensed",
)

MT_BENCH_PAIR = JudgePrompt(
    "mt-bench-pair",
    "3way",
    "Please act as an impartial judge and evaluate the quality of the responses provided by two AI "
    "assistants to the user question displayed below. You should choose the assistant that follows the "
    "user's instructions and answers the user's question better. Your evaluation should consider factors "
    "such as the helpfulness, relevance, accuracy, depth, creativity, and level of detail of their "
    "responses. Begin your evaluation by comparing the two responses and provide a short explanation. "
    "Avoid any position biases and ensure that the order in which the responses were presented does not "
    "influence your decision. Do not allow the length of the responses to influence your evaluation. Do "
    "not favor certain names of the assistants. Be as objective as possible. After providing your "
    'explanation, output your final verdict by strictly following this format: "[[A]]" if assistant A '
    'is better, "[[B]]" if assistant B is better, and "[[C]]" for a tie.',
    "[User Question]\n{question}\n\n[The Start of Assistant A's Answer]\n{answer_a}\n"
    "[The End of Assistant A's Answer]\n\n[The Start of Assistant B's Answer]\n{answer_b}\n"
    "[The End of Assistant B's Answer]",
    "MT-Bench pair-v2 (lm-sys/FastChat fastchat/llm_judge/data/judge_prompts.jsonl)",
)

ARENA_HARD_VERDICT_FIRST = JudgePrompt(
    "arena-hard-verdict-first",
    "5way",
    ARENA_HARD.system,
    ARENA_HARD.template,
    "Arena-Hard-Auto v0.1's prompt as above, the judge's turn prefilled with the label's opening "
    "(a judge without its explanation)",
    prefill="My final verdict is [[",
)

JUDGE_PROMPTS: dict[str, JudgePrompt] = {p.name: p for p in (ARENA_HARD, MT_BENCH_PAIR, ARENA_HARD_VERDICT_FIRST)}


@dataclass(frozen=True)
class Verdict:
    label: str | None  # one of LABELS_5WAY (on a 3-way prompt: never the ">>" ones), or None
    how: str  # one of PARSE_CLASSES

    @property
    def parsed(self) -> bool:
        return self.label is not None


_MIRROR = {"<<": ">>", "<": ">"}
_BRACKETED = re.compile(r"\[\[\s*([^\[\]\n]{1,12}?)\s*\]\]")
_BARE = re.compile(r"(?<![A-Za-z0-9])([AB])\s*(>>|>|=|<<|<)\s*([AB])(?![A-Za-z0-9])")
_BETTER = re.compile(
    r"\b(?:assistant|answer|response)\s+([AB])(?:'s answer)?\s+is\s+(significantly\s+|much\s+|slightly\s+)?better\b",
    re.IGNORECASE,
)
_TIE = re.compile(r"\b(?:it'?s a tie|is a tie|tie\b|relatively the same)", re.IGNORECASE)


def _label(x: str, op: str, y: str) -> str | None:
    """``x op y`` as an Arena-Hard label (``B<A`` is ``A>B``); None when x == y and op is not ``=``."""
    if op in _MIRROR:
        x, y, op = y, x, _MIRROR[op]
    if op == "=":
        return "A=B" if x != y else None
    if x == y:
        return None
    return f"{x}{op}{y}"


def _normalise(content: str, scale: str) -> str | None:
    s = re.sub(r"\s+", "", content).upper()
    if scale == "3way" and s in ("A", "B", "C"):
        return {"A": "A>B", "B": "B>A", "C": "A=B"}[s]
    if s == "TIE":
        return "A=B"
    m = re.fullmatch(r"([AB])(>>|>|=|<<|<)([AB])", s)
    return _label(*m.groups()) if m else None


def _one(labels: list[str], how: str, scale: str) -> Verdict | None:
    if scale == "3way":
        labels = [x.replace(">>", ">") for x in labels]
    distinct = set(labels)
    if not distinct:
        return None
    if len(distinct) > 1:
        return Verdict(None, "conflict")
    return Verdict(labels[0], how)


def parse_verdict(text: str, scale: str) -> Verdict:
    """The verdict in a judge's ``text`` under a prompt of ``scale`` (``5way``/``3way``).

    Rules in order, the first that finds a label decides: bracketed labels
    (``[[A>B]]``; on the 3-way prompt also ``[[A]]``, ``[[B]]``, ``[[C]]``), bare labels
    (``A>B``, ``B<A``, ``A=B``), phrases ("Assistant A is better", "tie"). Two different
    labels under the deciding rule: ``conflict`` (unparsed), as Arena-Hard-Auto leaves a
    judgment with two different labels unscored. On the 3-way scale ``A>>B`` reads as ``A>B``.
    """
    if scale not in ("5way", "3way"):
        raise ValueError(f"verdict scale {scale!r}: expected '5way' or '3way'")
    if not text.strip():
        return Verdict(None, "empty")
    bracketed = [m.group(1) for m in _BRACKETED.finditer(text)]
    labels = [x for x in (_normalise(b, scale) for b in bracketed) if x is not None]
    v = _one(labels, "bracketed", scale)
    if v is not None:
        return v
    v = _one([x for x in (_label(*m.groups()) for m in _BARE.finditer(text)) if x is not None], "bare", scale)
    if v is not None:
        return v
    phrases = []
    for m in _BETTER.finditer(text):
        x = m.group(1).upper()
        op = ">>" if (m.group(2) or "").strip().lower() in ("significantly", "much") else ">"
        phrases.append(f"{x}{op}{'B' if x == 'A' else 'A'}")
    phrases += ["A=B" for _ in _TIE.finditer(text)]
    v = _one(phrases, "phrase", scale)
    return v if v is not None else Verdict(None, "none")
