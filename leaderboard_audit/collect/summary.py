"""Summaries of a collected records directory: accuracy and unparseable rate per model x config.

    python -m leaderboard_audit.collect.summary fixtures/real
"""
from __future__ import annotations

import json
import sys
from pathlib import Path


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
    lines = ["| config | " + " | ".join(f"{m} acc / unparsed" for m in models) + " |",
             "|---|" + "---|" * len(models)]
    for k in keys:
        cells = []
        for m in models:
            s = summ[m][k]
            cells.append(f"{s['accuracy']:.2f} / {s['unparsed_rate']:.2f}" if k.startswith("gen|")
                         else f"{s['accuracy']:.2f} / -")
        esc = k.replace("|", "\\|")     # a pipe inside a table cell must be escaped
        lines.append(f"| `{esc}` | " + " | ".join(cells) + " |")
    tot = []
    for m in models:
        gen = [s for k, s in summ[m].items() if k.startswith("gen|")]
        n = sum(s["n"] for s in gen)
        tot.append(f"{sum(s['unparsed'] for s in gen) / n:.3f}" if n else "-")
    lines.append("| all gen configs (unparsed rate) | " + " | ".join(tot) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(sys.argv[1] if len(sys.argv) > 1 else "."))
