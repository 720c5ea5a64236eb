"""Summaries of a collected records directory: accuracy and unparseable rate per model x config,
and the answer classes of the generation configs (collect/answers.py).

    python -m leaderboard_audit.collect.summary fixtures/real
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any


def summarize(root: str | Path) -> dict[str, dict[str, dict[str, float]]]:
    """{model: {config: {"n", "accuracy", "unparsed"}}} over every benchmark."""
    root = Path(root)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for f in sorted(root.glob("*/*.jsonl")):
        if f.parent.name.startswith(("_", ".")):
            continue
        for raw in f.read_text(encoding="utf-8").splitlines():
            line = json.loads(raw)
            per = out.setdefault(line.get("model") or f.stem.replace("__", "/"), {})
            for k, bit in line["correct"].items():
                s = per.setdefault(k, {"n": 0, "correct": 0, "unparsed": 0})
                s["n"] += 1
                s["correct"] += int(bit)
                s["unparsed"] += int(k.startswith("gen|") and line.get("pred", {}).get(k, 0) is None)
    for per in out.values():
        for s in per.values():
            s["accuracy"] = s["correct"] / s["n"]
            s["unparsed_rate"] = s["unparsed"] / s["n"]
    return out


def markdown(root: str | Path) -> str:
    summ = summarize(root)
    models = list(summ)
    keys = list(next(iter(summ.values()))) if summ else []
    lines = ["| config | " + " | ".join(f"{m} acc / unparsed" for m in models) + " |", "|---|" + "---|" * len(models)]
    for k in keys:
        cells = []
        for m in models:
            s = summ[m][k]
            cells.append(
                f"{s['accuracy']:.2f} / {s['unparsed_rate']:.2f}"
                if k.startswith("gen|")
                else f"{s['accuracy']:.2f} / -"
            )
        esc = k.replace("|", "\\|")  # a pipe inside a table cell must be escaped
        lines.append(f"| `{esc}` | " + " | ".join(cells) + " |")
    tot = []
    for m in models:
        gen = [s for k, s in summ[m].items() if k.startswith("gen|")]
        n = sum(s["n"] for s in gen)
        tot.append(f"{sum(s['unparsed'] for s in gen) / n:.3f}" if n else "-")
    lines.append("| all gen configs (unparsed rate) | " + " | ".join(tot) + " |")
    return "\n".join(lines)


def answer_classes(root: str | Path) -> dict[str, dict[str, Counter[str]]]:
    """{model: {gen config: Counter(class)}}: from each line's ``answer_class`` when the
    collector wrote one, else re-derived from the raw sidecar's text and grid.json's label styles."""
    from .answers import answer_class
    from .harness import label_style_from_json

    root = Path(root)
    styles: dict[str, Any] = {}
    grid = json.loads((root / "grid.json").read_text(encoding="utf-8")) if (root / "grid.json").is_file() else {}
    for c in grid.get("configs", []):
        ls = (c.get("extra") or {}).get("label_style") or c.get("label_style")
        if isinstance(ls, dict):
            styles[c["key"]] = label_style_from_json(ls)
    out: dict[str, dict[str, Counter[str]]] = {}
    for f in sorted(root.glob("*/*.jsonl")):
        if f.parent.name.startswith(("_", ".")):
            continue
        lines = [json.loads(x) for x in f.read_text(encoding="utf-8").splitlines()]
        raw = root / "_raw" / f.parent.name / f.name
        texts = {}
        if any("answer_class" not in x for x in lines) and raw.is_file():
            texts = {
                r["item_id"]: r.get("gen", {}) for r in map(json.loads, raw.read_text(encoding="utf-8").splitlines())
            }
        for line in lines:
            per = out.setdefault(line.get("model") or f.stem.replace("__", "/"), {})
            got = line.get("answer_class")
            if got is None:
                got = {k: answer_class(styles[k], t) for k, t in texts.get(line["item_id"], {}).items() if k in styles}
            for k, cls in got.items():
                per.setdefault(k, Counter())[cls] += 1
    return out


def classes_markdown(root: str | Path) -> str:
    """Answer classes per model and generation template (all orderings pooled), as shares."""
    from .answers import CLASSES

    summ = answer_classes(root)
    lines = ["| model | template | n | " + " | ".join(CLASSES) + " |", "|---|---|---|" + "---|" * len(CLASSES)]
    for m, per in summ.items():
        by_t: dict[str, Counter[str]] = {}
        for k, c in per.items():
            by_t.setdefault(k.split("|")[1] if k.count("|") >= 2 else k, Counter()).update(c)
        tot: Counter[str] = Counter()
        for t, c in sorted(by_t.items()):
            tot.update(c)
            n = sum(c.values())
            lines.append(f"| {m} | {t} | {n} | " + " | ".join(f"{c[x] / n:.3f}" for x in CLASSES) + " |")
        n = sum(tot.values())
        if n:
            lines.append(f"| {m} | all | {n} | " + " | ".join(f"{tot[x] / n:.3f}" for x in CLASSES) + " |")
    return "\n".join(lines)


def classes_line(root: str | Path) -> list[str]:
    """One line per model: answer-class counts over every generation config (the collection summary)."""
    from .answers import CLASSES

    out = []
    for m, per in answer_classes(root).items():
        tot: Counter[str] = Counter()
        for c in per.values():
            tot.update(c)
        out.append(f"answer classes {m}: " + ", ".join(f"{x} {tot[x]}" for x in CLASSES))
    return out


if __name__ == "__main__":
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    print(markdown(root))
    print()
    print(classes_markdown(root))
