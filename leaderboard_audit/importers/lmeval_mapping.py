"""A mapping proposed for lm-eval runs whose tasks mix benchmarks and document sets.

metabench-style runs log one task per (benchmark, prompt variant): ``metabench_arc_secondary``,
``metabench_arc_secondary_permute``, ``metabench_arc_permute``, ``metabench_mmlu_...``. Some
variants share their documents (the same questions, options permuted), others are other
documents altogether. No ``--benchmark``/``--intersect`` combination imports that (one
benchmark has no document common to all runs; several benchmarks have different
configurations), and the user wrote the mapping by hand (UX review 2026-12-04 #10).

:func:`propose_mapping` reads the task names and documents and proposes one:

* task names split at ``_``/``-``; the tokens every task starts with are a common prefix,
  the next token names the benchmark (``arc``, ``mmlu``), the rest the configuration
  (``secondary``, ``secondary_permute``);
* within a benchmark, tasks whose documents overlap (half of the smaller set or more, by a
  document field both log: ``id``, ``original_hash``, ``question``, ...) are one group; the
  largest group is the benchmark, the other tasks are left out;
* the configurations every benchmark has are kept (a records set has one legend).

The caller imports with the proposal in memory and shows it only when the import then works.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from .lmeval import ID_FIELDS, discover_runs, load_mapping, read_tasks

#: documents two tasks must share (of the smaller task's) to be one benchmark
OVERLAP = 0.5


def _tokens(task: str) -> list[str]:
    return [t for t in re.split(r"[_\-]", task) if t]


def _doc_values(docs: list[Any]) -> dict[str, set[str]]:
    """Each identifying field every document logs (not the positional doc_id) -> its values."""
    out: dict[str, set[str]] = {}
    for name in ID_FIELDS:
        if name == "doc_id":
            continue
        vals = [d.ids.get(name) for d in docs]
        if vals and all(v is not None for v in vals):
            out[name] = set(vals)
    return out


def _share(a: dict[str, set[str]], b: dict[str, set[str]]) -> bool:
    for name in a.keys() & b.keys():
        small = min(len(a[name]), len(b[name]))
        if small and len(a[name] & b[name]) >= OVERLAP * small:
            return True
    return False


def _groups(tasks: list[str], values: dict[str, dict[str, set[str]]]) -> list[list[str]]:
    """Connected components of "shares documents"."""
    parent = {t: t for t in tasks}

    def find(t: str) -> str:
        while parent[t] != t:
            parent[t] = parent[parent[t]]
            t = parent[t]
        return t

    for i, a in enumerate(tasks):
        for b in tasks[i + 1 :]:
            if _share(values[a], values[b]):
                parent[find(a)] = find(b)
    out: dict[str, list[str]] = {}
    for t in tasks:
        out.setdefault(find(t), []).append(t)
    return sorted(out.values(), key=lambda g: (-len(g), g))


def propose_mapping(src: str | Path, model: str | None = None) -> tuple[dict[str, Any], list[str]] | None:
    """(mapping, tasks left out) for the lm-eval runs under ``src``, or None when the task
    names do not split into benchmark and configuration."""
    from ..records.errors import ProblemLog, RecordsError

    log, notes = ProblemLog(), []
    try:
        runs = discover_runs(Path(src), log, notes)
        read, _ = read_tasks(runs, load_mapping(None), None, None, log, notes)
    except (RecordsError, OSError, ValueError):
        return None
    docs: dict[str, list[Any]] = {}
    for t in read:
        docs.setdefault(t.task, []).extend(t.docs)
    names = sorted(docs)
    if len(names) < 2:
        return None
    toks = {t: _tokens(t) for t in names}
    prefix = 0
    while all(len(v) > prefix + 1 for v in toks.values()) and len({v[prefix] for v in toks.values()}) == 1:
        prefix += 1
    if any(len(v) <= prefix + 1 for v in toks.values()):
        return None  # no token left for a configuration
    bench_of = {t: toks[t][prefix] for t in names}
    config_of = {t: "_".join(toks[t][prefix + 1 :]) for t in names}
    values = {t: _doc_values(docs[t]) for t in names}
    kept: dict[str, list[str]] = {}
    for bench in sorted(set(bench_of.values())):
        tasks = [t for t in names if bench_of[t] == bench]
        kept[bench] = _groups(tasks, values)[0]
    common = set.intersection(*({config_of[t] for t in g} for g in kept.values()))
    if not common:
        return None
    chosen = sorted(t for g in kept.values() for t in g if config_of[t] in common)
    if len({bench_of[t] for t in chosen}) < 1 or len(common) < 1:
        return None
    mapping: dict[str, Any] = {
        "tasks": {t: {"benchmark": bench_of[t], "config": config_of[t]} for t in chosen},
    }
    if model:
        mapping["model"] = model
    return mapping, [t for t in names if t not in chosen]


__all__ = ["propose_mapping"]
