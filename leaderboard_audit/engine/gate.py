"""`--audit-submission MODEL`: the difference a newcomer's arrival makes (a CI gate).

The gate runs the check registry twice per scope, on the leaderboard *with* and
*without* the newcomer(s) (``auditor.audit_scope``; no metric is called here), and
keeps the verdicts of the checks that concern a newcomer (docs/ci-gate.md):

* a check whose ``gate`` role is ``"subject"`` contributes its verdicts whose
  subjects include a newcomer (its band, its two neighbour pairs);
* a ``"scope"`` check contributes its scope-wide verdict (champion set, the
  identified order's contradictions), compared with the same verdict without it.

A fail is the newcomer's (``created``) when it fails with the newcomer and did not
fail, or did not exist, without it (``Check.gate_created``: a check may blame an
older fail on a newcomer when the newcomer's own part of it fails). Only a
created fail of a gating check (or an undecided verdict of one on cells a newcomer
withheld, below) makes the exit code 1; pre-existing fails and fails
of checks that do not gate by default (``band``, opted in by ``--audit-gate band``)
are reported as context. ``skip`` verdicts (one configuration) stay ``skip``.

The gate fails closed on cells a newcomer withholds (reliability review 2026-12-07 D02):
on a scope where a newcomer has missing cells (any reason: ``not_collected``, ``failed``,
``not_possible`` are the submitter's word), every *undecided* verdict of a gating check
(``decided: false``, docs/audits.md "Incomplete grids") blocks like a created fail
(effect ``withheld``, its ``why`` "undecided: N cells withheld (...)"): an undecided
status is one that some completion of the missing cells, the newcomer's among them, could
turn into a fail. ``allow_undecided`` (``--audit-allow-undecided``) reports them as today,
warns that do not block. Missing cells of the models already on the board, with the
newcomer's own cells complete, leave undecided verdicts as warns (docs/ci-gate.md,
"Incomplete submissions").
"""

from __future__ import annotations

import difflib
from typing import Any
from collections.abc import Collection, Sequence

from ..checks import POOLED, Check, registry
from ..records import Records
from .scopes import scopes_of
from ..settings import DEFAULT_ALPHA, DEFAULT_BOOT, DEFAULT_SEED
from ..checks import Thresholds
from ..checks.verdicts import FAIL, PASS, SEVERITY, WARN

SKIP = "skip"
#: what a gate row means for the exit code
CREATED, EXISTING, NOT_GATING, NEW_WARN = "created", "pre-existing", "not gating", "new warn"
#: an undecided verdict of a gating check on a scope where a newcomer withheld cells: blocks
#: (unless ``allow_undecided``)
WITHHELD = "withheld"
#: (config, count) pairs and (item, config) cells named in a withheld row's text (the JSON has
#: every config and the first ``WITHHELD_CELLS_KEPT`` cells)
WITHHELD_CONFIGS_SHOWN, WITHHELD_CELLS_SHOWN, WITHHELD_CELLS_KEPT = 3, 2, 20


class GateError(ValueError):
    """A bad ``--audit-submission`` / ``--audit-gate`` value (a usage error, exit 4)."""


def closest(name: str, known: Sequence[str]) -> str | None:
    """The known name nearest to ``name`` (difflib), if any is close."""
    got = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return got[0] if got else None


def unknown_models_message(unknown: Sequence[str], known: Sequence[str]) -> str:
    parts = []
    for m in unknown:
        near = closest(m, known)
        parts.append(repr(m) + (f" (closest: {near!r})" if near else ""))
    return (
        f"--audit-submission {', '.join(parts)}: not in the records ({len(known)} models; a model's name is "
        "the `model` field of its lines, or its file name with `__` for `/`)"
    )


def concerned_checks() -> dict[str, Check]:
    """Every registered check with a gate role, in registry order."""
    return {n: c for n, c in registry().items() if c.gate in ("subject", "scope")}


def gating_checks(opt_in: Sequence[str] = ()) -> list[str]:
    """The checks whose created fails set the exit code: the default ones plus ``opt_in``."""
    concerned = concerned_checks()
    for name in opt_in:
        if name not in concerned:
            reg = registry()
            if name in reg:
                raise GateError(f"--audit-gate {name!r}: this check declares no gate role (Check.gate is None)")
            near = closest(name, list(concerned))
            raise GateError(
                f"--audit-gate {name!r}: no such check{f' (closest: {near!r})' if near else ''}; "
                f"checks that can gate: {', '.join(concerned)}"
            )
    return [n for n, c in concerned.items() if c.gate_default or n in opt_in]


def needed_checks() -> list[str]:
    """The registry's prefix through the last check with a gate role (what those read is
    computed before them)."""
    names = list(registry())
    concerned = set(concerned_checks())
    last = max((j for j, n in enumerate(names) if n in concerned), default=-1)
    return names[: last + 1]


def _by_check(verdicts: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for v in verdicts:
        out.setdefault(v["check"], []).append(v)
    return out


def withheld_cells(sc: Any, models: Collection[str]) -> dict[str, Any] | None:
    """The newcomers' missing cells in scope ``sc`` (None: they have none): their count, and per
    newcomer its count, per reason, per configuration (config order) and its first cells as
    [``benchmark/item``, config] (model, item, config order). Every reason counts: the gate saw
    none of these cells, and a reason is the submitter's word (``not_possible`` too)."""
    import numpy as np

    from ..records.missing import reason_name

    r = sc.records
    if r.missing is None:
        return None
    miss = np.asarray(r.missing)
    items, keys = r.items, r.grid.keys
    per: dict[str, Any] = {}
    for m in models:
        if m not in r.models:
            continue
        mm = miss[r.models.index(m)]  # items x configs
        n = int(np.count_nonzero(mm))
        if not n:
            continue
        codes, counts = np.unique(mm[mm != 0], return_counts=True)
        by_config = np.count_nonzero(mm, axis=0)
        cells = []
        for i, k in zip(*np.nonzero(mm)):
            if len(cells) == WITHHELD_CELLS_KEPT:
                break
            b, item = str(items.benchmark[i]), str(items.item_id[i])
            cells.append([item if item.startswith(f"{b}/") else f"{b}/{item}", keys[k]])
        per[m] = {
            "count": n,
            "reasons": {reason_name(c): int(x) for c, x in zip(codes.tolist(), counts.tolist())},
            "configs": [[keys[k], int(by_config[k])] for k in np.flatnonzero(by_config).tolist()],
            "shown": cells,
        }
    if not per:
        return None
    return {"count": sum(p["count"] for p in per.values()), "models": per}


def withheld_text(w: dict[str, Any]) -> str:
    """ "undecided: N cells withheld (model: n reason in K configs; first (benchmark/item, config),
    ...; per config: config n, ...)" for a scope's ``withheld_cells`` (the most telling part
    first: a reader may cut it)."""
    parts = []
    for m, p in w["models"].items():
        reasons = ", ".join(f"{n:,} {r}" for r, n in p["reasons"].items())
        k = len(p["configs"])
        first = ", ".join(f"({i}, {c})" for i, c in p["shown"][:WITHHELD_CELLS_SHOWN])
        configs = ", ".join(f"{c} {n:,}" for c, n in p["configs"][:WITHHELD_CONFIGS_SHOWN])
        more = f" and {k - WITHHELD_CONFIGS_SHOWN} more" if k > WITHHELD_CONFIGS_SHOWN else ""
        parts.append(f"{m}: {reasons} in {k} config{'s' if k != 1 else ''}; first {first}; per config: {configs}{more}")
    return f"undecided: {w['count']:,} cell{'s' if w['count'] != 1 else ''} withheld ({'; '.join(parts)})"


def _row(
    scope: str,
    check: Check,
    v: dict[str, Any],
    wv: dict[str, Any] | None,
    gating: bool,
    created: bool,
    newcomers: frozenset[str] = frozenset(),
    withheld: dict[str, Any] | None = None,
    allow_undecided: bool = False,
) -> dict[str, Any]:
    status = v["status"]
    # an undecided verdict of a gating check where a newcomer withheld cells: the gate never saw
    # the cells that decide it (D02); it blocks unless the maintainer allows undecided verdicts
    undecided = status == WARN and v.get("decided") is False and gating and withheld is not None
    if status == SKIP:
        effect = SKIP
    elif undecided and not allow_undecided:
        effect = WITHHELD
    elif status == FAIL:
        effect = (CREATED if gating else NOT_GATING) if created else EXISTING
    elif status == WARN and (wv is None or wv["status"] == PASS):
        effect = NEW_WARN
    else:
        effect = status
    return {
        "scope": scope,
        "check": check.name,
        "id": v["id"],
        "role": check.gate,
        "gates": gating,
        "status": status,
        "without": None if wv is None else wv["status"],
        "effect": effect,
        "value": v.get("value"),
        "threshold": v.get("threshold"),
        "margin": v.get("margin"),
        "message": v.get("message", ""),
        "why": (
            check.gate_why(v, newcomers)
            if effect == CREATED
            else withheld_text(withheld)
            if undecided and withheld is not None
            else None
        ),
        "undecided_withheld": undecided,
    }


def scope_gate(
    records: Records,
    scope: str,
    with_s: dict[str, Any],
    without_s: dict[str, Any] | None,
    models: Sequence[str],
    gating: Collection[str],
    allow_undecided: bool = False,
) -> dict[str, Any]:
    """One scope's gate rows and the newcomers' place, from two ``audit_scope`` results.
    ``allow_undecided``: an undecided gating verdict on cells a newcomer withheld is a warn
    (else it blocks: effect ``withheld``)."""
    from .scope import make_scope

    new = frozenset(models)
    sc = make_scope(records, scope)  # cases and subjects are cheap: from the reference order only
    withheld = withheld_cells(sc, models)
    und = {"withheld": withheld, "allow_undecided": allow_undecided}
    w_by, wo_by = _by_check(with_s["verdicts"]), _by_check(without_s["verdicts"] if without_s else [])
    rows = []
    for name, check in concerned_checks().items():
        vs = w_by.get(name, [])
        if len(vs) == 1 and vs[0]["status"] == SKIP:
            rows.append(_row(scope, check, vs[0], None, name in gating, False, **und))
            continue
        section = with_s.get(check.section) if check.section else None
        if check.gate == "subject":
            subjects = check.subjects(sc)
            for v, subj in zip(vs, subjects):
                if new & set(subj):
                    created = check.gate_created(v, None, new, section)
                    rows.append(_row(scope, check, v, None, name in gating, created, new, **und))
        else:
            olds = wo_by.get(name, [])
            for j, v in enumerate(vs):
                wv = olds[j] if j < len(olds) else None
                created = check.gate_created(v, wv, new, section)
                rows.append(_row(scope, check, v, wv, name in gating, created, new, **und))
    order = [r["model"] for r in with_s.get("leaderboard", [])]
    order_without = [r["model"] for r in (without_s or {}).get("leaderboard", [])]
    newcomers = []
    for m in models:
        pos = order.index(m) if m in order else None
        wins = [
            {"config": c["config"], "margin_items": c["margin_items"], "lead_items": c.get("lead_items")}
            for c in with_s.get("champions", {}).get("per_config", [])
            if m in c["winners"]
        ]
        board = {r["model"]: r for r in ((with_s.get("averaged") or {}).get("board") or {}).get("rows") or []}
        newcomers.append(
            {
                "model": m,
                # AUDITS v5: where the board the maintainer publishes puts it (its rank and interval)
                "board_rank": board[m]["rank"] if m in board else None,
                "rank_interval": board[m].get("rank_interval") if m in board else None,
                "position": None if pos is None else pos + 1,
                "of": len(order),
                "above": order[pos - 1] if pos else None,
                "below": order[pos + 1] if pos is not None and pos + 1 < len(order) else None,
                "wins": wins,
            }
        )
    split = []  # adjacent pairs of the board without the newcomers that a newcomer now sits between
    place = {m: j for j, m in enumerate(order)}
    for h, lo in zip(order_without[:-1], order_without[1:]):
        if h in place and lo in place and place[lo] - place[h] > 1:
            between = order[place[h] + 1 : place[lo]]
            split.append(
                {"higher": h, "lower": lo, "between": between, "status_without": _pair_status(without_s, h, lo)}
            )
    return {
        "n_models": with_s["n_models"],
        "n_items": with_s["n_items"],
        "n_configs": with_s["n_configs"],
        "reference": with_s["reference"],
        "newcomers": newcomers,
        "split": split,
        "withheld": withheld,
        "rows": rows,
    }


def _pair_status(s: dict[str, Any] | None, h: str, lo: str) -> str | None:
    for v in (s or {}).get("verdicts", []):
        if v["check"] == "manufactured" and v["id"].endswith(f"-{h}>{lo}]"):
            return v["status"]
    return None


def overall(rows: list[dict[str, Any]], strict: bool = False, allow_undecided: bool = False) -> dict[str, Any]:
    """Counts over the gate rows and the exit code: 1 for a created fail of a gating check or
    an undecided verdict of one on cells a newcomer withheld (``withheld``; with
    ``allow_undecided`` those rows are warns); with ``strict``, also a warn the newcomer brings
    to a gating check. ``undecided``: the rows undecided on withheld cells, blocking or not."""
    judged = [r for r in rows if r["status"] != SKIP]
    counts = {st: sum(r["status"] == st for r in judged) for st in (PASS, WARN, FAIL)}
    counts[SKIP] = len(rows) - len(judged)
    effects = {e: sum(r["effect"] == e for r in rows) for e in (CREATED, EXISTING, NOT_GATING, NEW_WARN, WITHHELD)}
    blocking = [
        r for r in rows if r["effect"] in (CREATED, WITHHELD) or (strict and r["gates"] and r["effect"] == NEW_WARN)
    ]
    worst = max((r["status"] for r in judged), key=SEVERITY.__getitem__, default=PASS)
    return {
        # the gate's word: FAIL only when it blocks; a fail that does not block reads as WARN
        "status": FAIL if blocking else (WARN if worst != PASS else PASS),
        "counts": counts,
        "effects": effects,
        "checks": len(rows),
        "exit_code": 1 if blocking else 0,
        "strict": strict,
        "allow_undecided": allow_undecided,
        "undecided": sum(bool(r.get("undecided_withheld")) for r in rows),
        "blocking": [r["id"] for r in blocking],
    }


def without(records: Records, models: Sequence[str]) -> Records | None:
    """The leaderboard before the newcomers arrived (None: they are all of it)."""
    new = set(models)
    rest = [m for m in records.models if m not in new]
    return records.select_models(rest) if rest else None


def audit_without(records: Records | None, scope: str, ids: Any = None, **kw: Any) -> dict[str, Any] | None:
    """``audit_scope`` of the gate's checks (``needed_checks``) on the board without the
    newcomers; ``ids``: its unambiguous verdict ids (``auditor.case_ids_by_scope``)."""
    from .scope import audit_scope, case_ids_by_scope

    if records is None:
        return None
    got = ids if ids is not None else case_ids_by_scope(records)
    return audit_scope(records, scope, only=needed_checks(), ids=got.get(scope), **kw)


def submission_audit(
    records: Records,
    models: Sequence[str],
    *,
    seed: int = DEFAULT_SEED,
    n_boot: int = DEFAULT_BOOT,
    thresholds: Thresholds | None = None,
    alpha: float = DEFAULT_ALPHA,
    strict: bool = False,
    allow_undecided: bool = False,
    gate: Sequence[str] = (),
    scopes: Sequence[str] | None = None,
    computed: dict[str, tuple[dict[str, Any], dict[str, Any] | None]] | None = None,
) -> dict[str, Any]:
    """Every scope's gate and the overall state (JSON-ready). ``computed``: scope -> (with,
    without) ``audit_scope`` results already at hand (the plugin's); others are computed.
    ``allow_undecided``: undecided gating verdicts on cells a newcomer withheld do not block."""
    models = list(dict.fromkeys(models))
    unknown = [m for m in models if m not in records.models]
    if unknown:
        raise GateError(unknown_models_message(unknown, records.models))
    gating = gating_checks(gate)
    names = list(scopes) if scopes is not None else scopes_of(records)
    kw = {"seed": seed, "n_boot": n_boot, "thresholds": thresholds or Thresholds(), "alpha": alpha}
    from .scope import audit_scope, case_ids_by_scope

    old = without(records, models)
    ids: dict[str, Any] = {}
    out = {}
    for s in names:
        pair = (computed or {}).get(s)
        if pair is None:
            if not ids:
                ids = {"with": case_ids_by_scope(records), "without": case_ids_by_scope(old) if old else {}}
            with_s = audit_scope(records, s, only=needed_checks(), ids=ids["with"].get(s), **kw)
            pair = (with_s, audit_without(old, s, ids["without"], **kw))
        out[s] = scope_gate(records, s, pair[0], pair[1], models, gating, allow_undecided)
    if len(records.benchmarks) == 1 and POOLED in out and records.benchmarks[0] in out:
        # one benchmark: pooled repeats it, so its verdicts are counted (and shown) once, under
        # pooled, as in the reports (UX review 2026-12-04 #15: "2 fails created" was one verdict)
        out[records.benchmarks[0]]["repeats"] = POOLED
    rows = [r for s in out.values() if not s.get("repeats") for r in s["rows"]]
    concerned = concerned_checks()
    return {
        "models": models,
        "gate": {
            "gating": gating,
            "context": [n for n in concerned if n not in gating],
            "opt_in": [n for n, c in concerned.items() if not c.gate_default],
        },
        "scopes": out,
        "overall": overall(rows, strict, allow_undecided),
    }


def with_gate(report: dict[str, Any], records: Records, models: Sequence[str], **kw: Any) -> dict[str, Any]:
    """``evidence.enrich_report`` plus the gate (``submission_audit``, seed and resamples
    from the report unless given) under ``submission_audit``; in place, also returned."""
    from .evidence import enrich_report

    enrich_report(report, records)
    kw.setdefault("seed", report.get("seed", DEFAULT_SEED))
    kw.setdefault("n_boot", report.get("bootstrap", DEFAULT_BOOT))
    report["submission_audit"] = submission_audit(records, models, **kw)
    return report


def submission_cases(cases: list[Any], models: Sequence[str]) -> list[Any]:
    """The cases the gate collects as tests: of each check with a gate role, its cases about
    a newcomer ("subject") or every case ("scope"), and a check's one skipped case per
    scope. Matches subjects exactly, so a model name that contains another one selects
    nothing extra."""
    new = set(models)
    concerned = concerned_checks()
    out = []
    for c in cases:
        check = concerned.get(c.check)
        if check is None:
            continue
        if check.gate == "scope" or new & set(c.subject) or (not c.subject and c.vid == f"{c.check}[{c.scope}]"):
            out.append(c)
    return out


__all__ = [
    "GateError",
    "audit_without",
    "closest",
    "concerned_checks",
    "gating_checks",
    "needed_checks",
    "overall",
    "scope_gate",
    "submission_audit",
    "submission_cases",
    "unknown_models_message",
    "with_gate",
    "withheld_cells",
    "withheld_text",
    "without",
]
