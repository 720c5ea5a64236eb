"""The plugin's public fixtures: ``audit_records``, ``audit_collect``, ``audit_verdict``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .names import PLUGIN_NAME


@pytest.fixture(scope="session")
def audit_records(request: pytest.FixtureRequest) -> Any:
    """The audited records (``leaderboard_audit.Records``) of this run: loaded once per
    process from ``--audit PATH``, or produced by ``--audit-collect SPEC.toml``.
    Skips the test when the run has no records."""
    session = request.config.pluginmanager.get_plugin(PLUGIN_NAME)
    if session is None:
        pytest.skip("no records: run with --audit PATH (or --audit-collect SPEC.toml)")
    return session.records


@pytest.fixture(scope="session")
def audit_collect(request: pytest.FixtureRequest) -> Callable[..., Any]:
    """``audit_collect(spec)`` -> Records: run the collector (vLLM or another engine) for a
    collection spec (TOML path or dict) once per session under a file lock (xdist
    workers wait for the one that collects), then load the records it wrote."""
    done: dict[str, Any] = {}

    def collect(spec: Any) -> Any:
        key = json.dumps(spec, sort_keys=True, default=str) if isinstance(spec, dict) else str(Path(spec).resolve())
        if key not in done:
            from .collect_once import collect_once
            from ..records import load_records

            done[key] = load_records(collect_once(spec, request.config))
        return done[key]

    return collect


@pytest.fixture
def audit_verdict(request: pytest.FixtureRequest) -> Callable[..., dict[str, Any]]:
    """``audit_verdict(check, value, pass_at=..., warn_at=None, higher_is_better=True,
    scope="pooled", message="", vid=None, evidence=None)`` judges a value you computed
    and records the verdict like a bundled check's: pass / warn (a ``W`` status) /
    fail (the test fails with the evidence), with its margin, in the JSON/Markdown/HTML
    reports, the terminal summary and JUnit ``audit_*`` properties."""
    from .results import record_verdict
    from ..checks.verdicts import judge, make_verdict

    def verdict(
        check: str,
        value: float,
        *,
        pass_at: float,
        warn_at: float | None = None,
        higher_is_better: bool = True,
        scope: str = "pooled",
        message: str = "",
        vid: str | None = None,
        evidence: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        status, margin = judge(value, pass_at=pass_at, warn_at=warn_at, higher_is_better=higher_is_better)
        op = ">=" if higher_is_better else "<="
        text = message or f"{check}: value {value:.3f} (pass {op} {pass_at:g}" + (
            f", warn {op} {warn_at:g})" if warn_at is not None else ")"
        )
        v = make_verdict(
            check, vid or f"{check}[{scope}]", status, float(value), float(pass_at), margin, text, evidence
        )
        v["scope"] = scope
        v["user"] = True
        record_verdict(request.node, v)
        return v

    return verdict


__all__ = ["audit_collect", "audit_records", "audit_verdict"]
