"""One scope of the audit: its cases (the tests the plugin collects) and its sections and
verdicts, as a loop over the check registry (``leaderboard_audit.checks``)."""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace
from typing import Any

from ..checks import Check, Scope, Thresholds, registry
from ..checks.guard import guarded_verdicts, is_bundled, json_safe, namespaced
from ..metrics.per_model import DerivedCache, sharing
from ..records import Records
from ..settings import DEFAULT_ALPHA, DEFAULT_BOOT, DEFAULT_SEED
from ..checks.verdicts import skipped
from ..checks.incomplete_sections import partial_scope_report
from .scopes import alias_of, scope_records, scopes_of


def make_scope(
    records: Records,
    scope: str,
    *,
    seed: int = DEFAULT_SEED,
    n_boot: int = DEFAULT_BOOT,
    thresholds: Thresholds | None = None,
    alpha: float = DEFAULT_ALPHA,
) -> Scope:
    return Scope(
        scope_records(records, scope),
        scope,
        seed=seed,
        n_boot=n_boot,
        thresholds=thresholds or Thresholds(),
        alpha=alpha,
        full=records,
    )


@dataclass(frozen=True)
class Case:
    """One test the plugin collects: ``test_<check>[<test_id>]`` judging verdict ``vid``."""

    check: str
    scope: str
    vid: str
    test_id: str
    index: int  # position among the check's verdicts in this scope
    subject: tuple[str, ...] = ()  # the models the case is about (empty: the whole scope)
    also: tuple[Case, ...] = ()  # an alias scope's cases this test judges too (``collected_cases``)


def cases(records: Records, checks: Iterable[Check] | None = None) -> dict[str, list[Case]]:
    """check name -> its cases over every scope (pooled first, then benchmarks sorted;
    models in reference-leaderboard order). Ids are unique across the whole audit: a
    test id that two scopes or two pairs would share (benchmark ``a``/model ``b-c`` and
    benchmark ``a-b``/model ``c``) gets ``~2``, ``~3``... in that order."""
    chosen = list(checks) if checks is not None else list(registry().values())
    scopes = {s: make_scope(records, s) for s in scopes_of(records)}
    out: dict[str, list[Case]] = {}
    for check in chosen:
        raw = []
        for s, sc in scopes.items():
            if not check.applies_to(s, records):
                continue
            if check.skip_reason(sc):  # one skipped case per scope, not one per model or pair
                raw.append((s, 0, f"{check.name}[{s}]", s, ()))
            else:
                if check.report_only and check.cases(sc):
                    raise RuntimeError(f"check {check.name!r} is report_only but has cases in scope {s!r}")
                raw += [
                    (s, j, vid, tid, subj)
                    for j, ((vid, tid), subj) in enumerate(zip(check.cases(sc), check.subjects(sc)))
                ]
        seen: dict[str, int] = {}
        lst = []
        for s, j, vid, tid, subj in raw:
            n = seen[tid] = seen.get(tid, 0) + 1
            suffix = "" if n == 1 else f"~{n}"
            vid = namespaced(check, vid)  # a registered check's ids start with its name: no shadowing
            lst.append(Case(check.name, s, vid[:-1] + suffix + "]" if suffix else vid, tid + suffix, j, subj))
        out[check.name] = lst
    return out


def collected_cases(records: Records, by_check: dict[str, list[Case]]) -> dict[str, list[Case]]:
    """The tests the plugin collects: ``cases`` with an alias scope's duplicates folded in.

    With a single benchmark, ``pooled`` holds the benchmark's items (``alias_of``) and a
    check whose section is reused (not ``scope_dependent``) gives it the same verdicts,
    ids aside. Its cases are then not tests of their own: each goes, in ``also``, to the
    benchmark's case with the same index, and that one test judges both verdicts (both
    scopes stay in the report; README, "One benchmark"). Other checks keep both."""
    checks = registry()
    target = {s: alias_of(records, s) for s in scopes_of(records)}
    out: dict[str, list[Case]] = {}
    for name, lst in by_check.items():
        check = checks.get(name)
        if check is None or check.section is None or getattr(check, "scope_dependent", False):
            out[name] = list(lst)
            continue
        own = {(c.scope, c.index) for c in lst}
        folded: dict[tuple[str, int], list[Case]] = {}
        for c in lst:
            t = target.get(c.scope, c.scope)
            if t != c.scope and (t, c.index) in own:
                folded.setdefault((t, c.index), []).append(c)
        if not folded:
            out[name] = list(lst)
            continue
        out[name] = [
            replace(c, also=tuple(folded[(c.scope, c.index)])) if (c.scope, c.index) in folded else c
            for c in lst
            if target.get(c.scope, c.scope) == c.scope or (target[c.scope], c.index) not in own
        ]
    return out


def audit_scope(records: Records, scope: str, **kw: Any) -> dict[str, Any]:
    """Every section and verdict of one scope, JSON-ready (``audit_scope_computed``'s report)."""
    return audit_scope_computed(records, scope, **kw)[0]


def audit_scope_computed(
    records: Records,
    scope: str,
    *,
    seed: int = DEFAULT_SEED,
    n_boot: int = DEFAULT_BOOT,
    thresholds: Thresholds | None = None,
    alpha: float = DEFAULT_ALPHA,
    ids: dict[tuple[str, int], str] | None = None,
    shared: Scope | None = None,
    only: Collection[str] | None = None,
    cache: DerivedCache | None = None,
) -> tuple[dict[str, Any], Scope]:
    """Every section and verdict of one scope, JSON-ready, and the in-process ``Scope`` that
    computed them (kept apart: an alias scope reuses its sections, nothing rides in the report).

    ``ids`` maps (check, index) to the unambiguous verdict id (``cases``); ``shared``
    is an already computed scope with the same items (``alias_of``) whose sections
    are reused instead of computed again; ``only``: run just these checks (the
    submission gate passes a prefix of the registry, so what they read is computed);
    ``cache``: the audit's derived values (``DerivedCache``), else the one sharing now, else
    one for this scope alone."""
    with sharing(cache):
        sc = make_scope(records, scope, seed=seed, n_boot=n_boot, thresholds=thresholds, alpha=alpha)
        M, N, K = sc.shape
        out: dict[str, Any] = {"n_items": N, "n_models": M, "n_configs": K, "reference": sc.keys[sc.ref]}
        verdicts: list[dict[str, Any]] = []
        for check in registry().values():
            if (only is not None and check.name not in only) or not check.applies_to(scope, records):
                continue

            def run(check: Check = check) -> list[dict[str, Any]]:
                reason = check.skip_reason(sc)
                if check.section is not None and (reason is None or check.section_when_skipped):
                    reuse = (
                        shared is not None
                        and check.section in shared.sections
                        and not getattr(check, "scope_dependent", False)
                    )
                    section = _alias_copy(shared.sections[check.section]) if reuse else check.compute(sc)
                    sc.sections[check.section] = section
                    out[check.section] = section
                else:
                    section = None
                return [skipped(check.name, f"{check.name}[{scope}]", reason)] if reason else check.judge(sc, section)

            if is_bundled(check):
                found = run()
            else:  # a registered check fails only its own verdicts (check_guard.py)
                mine = sorted((j, vid) for (name, j), vid in (ids or {}).items() if name == check.name)
                found = guarded_verdicts(check, [vid for _, vid in mine], run)
                if check.section in out:
                    out[check.section] = json_safe(out[check.section])
            if records.missing is not None:  # issue 44: decided or undecided (checks/incomplete.py)
                from ..checks.incomplete import decide

                found = decide(check, sc, found)
            for j, v in enumerate(found):
                if ids is not None and (check.name, j) in ids:
                    v["id"] = ids[(check.name, j)]
            verdicts += found
        out["verdicts"] = verdicts
        if records.missing is not None:
            from ..checks.incomplete import incomplete_section, is_incomplete

            out["incomplete"] = incomplete_section(sc)
            if is_incomplete(sc):  # the descriptive sections: nothing read as if a missing cell were 0
                out = partial_scope_report(sc, out)
        return out, sc


def _alias_copy(section: Any) -> Any:
    """An alias scope's own copy of a shared section, one level deep (a dict, or a list of
    entries such as the pairs): the report adds to entries (pair evidence), nothing changes
    a section deeper than that, so the nested values stay shared (a JSON round trip of a
    4,278-model scope's sections took 0.13 s)."""
    if type(section) is dict:
        return dict(section)
    if type(section) is list:
        return [dict(x) if type(x) is dict else x for x in section]
    return section


def case_ids_by_scope(
    records: Records, by_check: dict[str, list[Case]] | None = None
) -> dict[str, dict[tuple[str, int], str]]:
    """scope -> (check, index) -> the unambiguous verdict id (from ``cases``, or its result)."""
    out: dict[str, dict[tuple[str, int], str]] = {}
    for lst in (by_check if by_check is not None else cases(records)).values():
        for c in lst:
            out.setdefault(c.scope, {})[(c.check, c.index)] = c.vid
    return out


__all__ = [
    "Case",
    "audit_scope",
    "audit_scope_computed",
    "case_ids_by_scope",
    "cases",
    "collected_cases",
    "make_scope",
]
