"""Benchmark rows and a collection spec for the fake engine."""

from __future__ import annotations

import json
from pathlib import Path


def arc_lines(n: int, three_choice: tuple[int, ...] = ()) -> str:
    """ARC rows in the hub schema (``Q<i>``, four choices, gold cycling A-D); the rows in
    ``three_choice`` have three choices (gold A), which the loader drops."""
    rows = []
    for i in range(n):
        k = 3 if i in three_choice else 4
        row = {
            "id": f"Q{i}",
            "question": f"What is {i}?",
            "choices": {"text": [f"opt{i}-{j}" for j in range(k)], "label": list("ABCD")[:k]},
            "answerKey": "ABCD"[i % 4 if k == 4 else 0],
        }
        rows.append(json.dumps(row) + "\n")
    return "".join(rows)


def mmlu_lines(n: int) -> str:
    """MMLU rows in the hub schema (one subject, gold cycling 0-3)."""
    rows = (
        {"question": f"{i} plus {i}?", "subject": "math", "choices": [str(i + k) for k in range(4)], "answer": i % 4}
        for i in range(n)
    )
    return "".join(json.dumps(r) + "\n" for r in rows)


def _bench_files(d: Path) -> dict[str, str]:
    d.mkdir(parents=True, exist_ok=True)
    arc, mm = d / "arc.jsonl", d / "mmlu.jsonl"
    arc.write_text(arc_lines(23, three_choice=(4,)))
    mm.write_text(mmlu_lines(17))
    return {"arc": str(arc), "mmlu": str(mm)}


def _spec(tmp: Path, out: str = "records", **kw) -> Path:
    files = _bench_files(tmp / "bench")
    models = kw.pop("models", ["m/one", "two"])
    lines = [
        f'output = "{out}"',
        'engine = "fake"',
        "n_items = 12",
        "chunk_items = 5",
        'benchmarks = ["arc", "mmlu"]',
        "[benchmark_files]",
    ]
    lines += [f'{k} = "{v}"' for k, v in files.items()]
    for m in models:
        lines += ["[[models]]", f'name = "{m}"', f'path = "fake-{m}"']
    p = tmp / "spec.toml"
    p.write_text("\n".join(lines) + "\n")
    return p


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
