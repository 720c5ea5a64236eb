"""Every decision an import needs, named at once (issue 22).

An import can stop on several independent decisions the runs do not make for you:
which model it is, which metric every run logs, whether differently named tasks are
one benchmark, and whether runs covering different documents should be intersected.
Each is found only after the one before it is settled, so a first try used to fail
on one, the second on the next, and so on (four tries on the bundled SmolLM2 runs).

:func:`load_or_decide` tries the import; when it fails on a decision it recognises,
it settles that decision with its suggested value *in memory* and tries again,
until the import succeeds or fails on something else. It then raises one
:class:`DecisionsNeeded` naming every decision, the value that made the import
work, and the one command line that does it. Nothing is written: the user makes
the decisions (they change what is audited), but in one more try, not four.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..records.errors import RecordsError

# The fix texts the importers attach to each decision's error (matched exactly): importers/fixes.py
from .fixes import FIX_COVERAGE, FIX_METRIC_MISSING, FIX_MODEL, FIX_MODEL_HELM, FIX_ONE_LEGEND  # noqa: E402,F401

MAX_TRIES = 6
#: the file name the proposed mapping is to be saved under (the suggested command reads it)
MAPPING_FILE = "mapping.json"


@dataclass(frozen=True)
class Decision:
    what: str  # model, metric, benchmark, documents
    why: str  # the problem, in one line
    flag: list[str]  # the CLI words that settle it ([] = leave a flag out)
    drop: str | None = None  # a flag of the user's command to leave out
    note: str = ""

    def line(self) -> str:
        how = " ".join(self.flag) if self.flag else f"leave out {self.drop}"
        return f"{self.what}: {self.why} -> {how}" + (f" ({self.note})" if self.note else "")


class DecisionsNeeded(RecordsError):
    """The import needs these decisions; with all of them it works (checked in memory)."""

    def __init__(
        self,
        decisions: list[Decision],
        command: str,
        shape: str | None,
        rest: RecordsError | None,
        mapping: dict[str, Any] | None = None,
    ):
        self.decisions = decisions
        self.command = command
        self.rest = rest
        self.mapping = mapping
        n = len(decisions)
        lines = [f"{i}. {d.line()}" for i, d in enumerate(decisions, 1)]
        if rest is None:
            lines.append(f"with {'these' if n > 1 else 'this'}, the import works (checked, nothing written): {shape}")
            if mapping is not None:
                import json

                lines.append(f"save this as {MAPPING_FILE} (or as SRC/audit_mapping.json, read without --mapping):")
                lines.extend("   " + x for x in json.dumps(mapping, indent=2).splitlines())
            lines.append(f"run: {command}")
        else:  # no command line known to fail is suggested (UX review 2026-12-04 #10)
            lines.append("with " + ("these" if n > 1 else "this") + ", the import still stops on:")
            lines.extend("   " + x for x in str(rest).splitlines())
            lines.append(
                "no command line makes this import work yet: name each run's benchmark and config in a mapping "
                "file (docs/importers.md, 'Mapping file'), then import with --mapping FILE"
            )
        ValueError.__init__(
            self,
            f"this import needs {n} decision{'s' if n > 1 else ''} (all of them below; nothing was written):\n  "
            + "\n  ".join(lines),
        )
        self.problems = rest.problems if rest is not None else []
        self.total = rest.total if rest is not None else 0
        self.fix = f"run: {command}" if rest is None else "write a mapping file (docs/importers.md) and pass it"


def _guess_model(src: str) -> str:
    name = Path(os.path.abspath(src)).name or "model"
    from ..records.reader import filename_for_model

    try:
        filename_for_model(name)
    except RecordsError:
        return "model"
    return name


def _common_name(names: list[str]) -> str:
    pre = os.path.commonprefix(names).rstrip("_-. ")
    return pre or names[0]


def _decide(exc: RecordsError, opts: dict[str, Any], src: str) -> Decision | None:
    """The decision ``exc`` stops on, settled in ``opts``; None when it is no such decision."""
    first = exc.problems[0].message if exc.problems else str(exc)
    if exc.fix in (FIX_MODEL, FIX_MODEL_HELM) and not opts.get("model"):
        guess = _guess_model(src)
        opts["model"] = guess
        return Decision(
            "model",
            "the runs do not name it (no model name in a results_*.json, run folders not named <org>__<model>)",
            ["--model", _quote(guess)],
            note="the source folder's name; any name will do",
        )
    if exc.fix == FIX_METRIC_MISSING and opts.get("metric"):
        m = opts.pop("metric")
        have = re.search(r"\(has (.*)\)$", first)
        return Decision(
            "metric",
            f"{exc.total} sample(s) log no {m!r}" + (f" (they have {have.group(1)})" if have else ""),
            [],
            drop=f"--metric {m}",
            note="each run's own: acc where it is logged, else exact_match; or name a metric per task in a mapping",
        )
    if exc.fix == FIX_ONE_LEGEND and not opts.get("benchmark"):
        names = [m.group(1) for p in exc.problems if (m := re.match(r"benchmark '(.*?)' has config", p.message))]
        if len(names) < 2:
            return None
        name = _common_name(names)
        opts["benchmark"] = name
        return Decision(
            "benchmark",
            f"the tasks {', '.join(names)} are read as {len(names)} benchmarks with different configurations",
            ["--benchmark", _quote(name)],
            note="if they are one benchmark under different prompts: each run becomes a configuration; "
            "otherwise import them separately or name benchmark and config per run in a mapping",
        )
    if exc.fix == FIX_COVERAGE and not opts.get("intersect"):
        opts["intersect"] = True
        lack = re.search(r"config '(.*?)'\) lacks (\d+) ", first)
        eg = f", e.g. config {lack.group(1)!r} lacks {lack.group(2)}" if lack else ""
        return Decision(
            "documents",
            f"{exc.total} run(s) lack documents another run has{eg}",
            ["--intersect"],
            note="imports only the documents every run covers, and says how many were dropped",
        )
    return None


def _quote(s: str) -> str:
    import shlex

    return shlex.quote(s)


def load_or_decide(src: str, fmt: str, opts: dict[str, Any], argv_words: list[str]):
    """``load(src, fmt, **opts)``, or :class:`DecisionsNeeded` naming every decision it needs.

    ``argv_words`` is the user's command (``leaderboard-audit import FMT SRC -o OUT ...``),
    to which the suggested command adds (or from which it drops) the decisions' flags.
    """
    from . import load

    try:
        return load(src, fmt, **dict(opts))
    except DecisionsNeeded:
        raise
    except RecordsError as first:
        exc: RecordsError | None = first
        trial = dict(opts)
        decisions: list[Decision] = []
        rec = None
        for _ in range(MAX_TRIES):
            assert exc is not None
            d = _decide(exc, trial, src)
            if d is None:
                break
            decisions.append(d)
            try:
                rec = load(src, fmt, **dict(trial))
                exc = None
                break
            except RecordsError as again:
                exc = again
        if not decisions:
            raise
        proposed = None
        if exc is not None:  # no flag settles it: tasks grouped by their documents, in a mapping
            found = _proposed_mapping(src, fmt, trial)
            if found is not None:
                proposed, rec, decision = found
                decisions = [d for d in decisions if d.what not in ("benchmark", "documents")] + [decision]
                exc = None
        words = list(argv_words)
        for d in decisions:
            if d.drop:
                words = _drop(words, d.drop.split())
            words += d.flag
        shape = None
        if rec is not None:
            n_models, n_items, n_cfg = rec.shape
            from ..records.words import count

            shape = (
                f"{count(n_models, 'model')} x {count(n_items, 'item')} x {count(n_cfg, 'config')} "
                f"[{', '.join(rec.benchmarks)}]"
            )
        needed = DecisionsNeeded(decisions, " ".join(words), shape, exc, proposed)
        dropped = ("benchmark", "intersect") if proposed is not None else ()  # the mapping settles those
        needed.settled = {
            k: v for k, v in trial.items() if k in ("model", "benchmark", "intersect") and k not in dropped
        }
        raise needed from None


def _proposed_mapping(src: str, fmt: str, trial: dict[str, Any]) -> tuple[dict[str, Any], Any, Decision] | None:
    """lm-eval runs no flag can import (UX review 2026-12-04 #10): the mapping
    ``lmeval_mapping.propose_mapping`` proposes, when the import works with it."""
    from ..formats import IMPORTERS
    from . import load

    from .lmeval import FORMAT_INFO as LMEVAL

    try:
        if IMPORTERS[fmt].name != LMEVAL["name"] or trial.get("mapping") is not None:
            return None
    except KeyError:
        return None
    if (Path(src) / "audit_mapping.json").exists():
        return None  # the user's own mapping applies
    from .lmeval_mapping import propose_mapping

    found = propose_mapping(src)
    if found is None:
        return None
    mapping, left = found
    opts = {k: v for k, v in trial.items() if k not in ("benchmark", "intersect", "mapping")}
    try:
        rec = load(src, fmt, mapping=mapping, **opts)
    except (RecordsError, ValueError):
        return None
    benches = sorted({v["benchmark"] for v in mapping["tasks"].values()})
    configs = sorted({v["config"] for v in mapping["tasks"].values()})
    decision = Decision(
        "mapping",
        f"the tasks hold {len(benches)} benchmark{'s' if len(benches) != 1 else ''} ({', '.join(benches)}) whose "
        f"variants share documents: configs {', '.join(configs)}",
        ["--mapping", MAPPING_FILE],
        note="proposed below, tasks grouped by shared documents"
        + (f"; left out (other documents, or a config not every benchmark has): {', '.join(left)}" if left else ""),
    )
    return mapping, rec, decision


def audit_decisions(src: str, fmt: str, opts: dict[str, Any], first: RecordsError) -> RecordsError:
    """For the front ends that audit an importer's source in place (``pytest --audit SRC
    --audit-format F``, ``leaderboard-audit audit SRC --format F``), which take no --model or
    --benchmark: every decision at once, as the import command names them, settled in one
    mapping file to save as ``SRC/audit_mapping.json`` (UX review 2026-12-04 #11: pytest
    named only the first problem, and a --model it does not have). ``first`` when there is
    nothing to propose (the user's own mapping, or a problem no decision settles)."""
    import json

    if opts.get("mapping") is not None or (Path(src) / "audit_mapping.json").exists():
        return first
    try:
        load_or_decide(src, fmt, dict(opts), [])
    except DecisionsNeeded as needed:
        if needed.rest is not None:
            return first
        settled = getattr(needed, "settled", {})
        mapping = dict(needed.mapping or {})
        for key in ("model", "benchmark"):
            if key in settled and not (key == "benchmark" and needed.mapping):
                mapping[key] = settled[key]
        if not mapping:
            return first
        lines = [f"{i}. {d.what}: {d.why}" for i, d in enumerate(needed.decisions, 1)]
        lines.append(
            "with the mapping below the import works (checked, nothing written); save it as "
            f"{Path(src) / 'audit_mapping.json'} (read when no mapping option is given):"
        )
        lines.extend("   " + x for x in json.dumps(mapping, indent=2).splitlines())
        if settled.get("intersect"):
            lines.append("and audit with --audit-intersect (pytest) or --intersect (leaderboard-audit audit)")
        err = RecordsError.one(
            str(src),
            None,
            f"this import needs {len(needed.decisions)} decision{'s' if len(needed.decisions) != 1 else ''} "
            "(all of them below):\n  " + "\n  ".join(lines),
            fix=f"save the mapping above as {Path(src) / 'audit_mapping.json'} (docs/importers.md, 'Mapping file')",
        )
        return err
    except RecordsError:
        return first
    return first


def _drop(words: list[str], flag: list[str]) -> list[str]:
    """``words`` without the flag (``--metric acc`` or ``--metric=acc``)."""
    out, i = [], 0
    while i < len(words):
        w = words[i]
        if w == flag[0] and i + 1 < len(words):
            i += 2
            continue
        if w.startswith(flag[0] + "="):
            i += 1
            continue
        out.append(w)
        i += 1
    return out
