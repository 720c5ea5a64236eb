"""The check registry: one module per check, ids in one place, thresholds from the checks."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from helpers.builders import stable_records
from leaderboard_audit.engine import audit, cases, dumps_report
from leaderboard_audit.checks import BUILTIN, default_thresholds, registry
from leaderboard_audit.records import Items, Records
from leaderboard_audit.records.grid import paper_grid
from leaderboard_audit.settings import bundled_threshold_names
from leaderboard_audit.checks import Thresholds
from leaderboard_audit.checks.verdicts import FAIL, PASS, WARN, judge
from helpers.paths import REPO


def test_bundled_checks_in_report_order():
    assert tuple(registry())[: len(BUILTIN)] == BUILTIN
    for name, check in registry().items():
        assert check.name == name and check.title


def test_ini_threshold_names_equal_the_checks_declarations():
    # plugin.py registers ini names without importing the checks (import-light): same set
    assert set(bundled_threshold_names()) == set(default_thresholds())


def test_every_verdict_id_is_a_case_and_aligned():
    r = stable_records()
    rep = audit(r, n_boot=200)
    by_check = cases(r)
    for check, lst in by_check.items():
        for c in lst:
            ids = [v["id"] for v in rep["scopes"][c.scope]["verdicts"] if v["check"] == check]
            assert ids[c.index] == c.vid


def _records(benchmarks: list[str], models: list[str]) -> Records:
    grid = paper_grid()
    n = 10
    items = Items(
        np.array([b for b in benchmarks for _ in range(n)], dtype=object),
        np.array([f"{b}/q{i}" for b in benchmarks for i in range(n)], dtype=object),
        [0] * (n * len(benchmarks)),
        [None] * (n * len(benchmarks)),
        [None] * (n * len(benchmarks)),
    )
    rng = np.random.default_rng(0)
    C = rng.random((len(models), n * len(benchmarks), len(grid))) < 0.5
    return Records(C, tuple(sorted(models)), items, grid)


def test_colliding_ids_are_made_unambiguous():
    # benchmark "a" / model "b-c" and benchmark "a-b" / model "c" both read "a-b-c"
    r = _records(["a", "a-b"], ["b-c", "c"])
    band = cases(r)["band"]
    tids = [c.test_id for c in band]
    assert len(tids) == len(set(tids)), tids
    vids = [c.vid for c in band]
    assert len(vids) == len(set(vids))
    rep = audit(r, n_boot=200)
    all_ids = [v["id"] for s in rep["scopes"].values() for v in s["verdicts"]]
    assert len(all_ids) == len(set(all_ids))


def test_thresholds_reject_unknown_nonfinite_and_bad_k():
    with pytest.raises(ValueError, match="unknown audit threshold"):
        Thresholds({"band_pas": 0.1})
    for bad in ("nan", "inf", float("nan"), "-inf"):
        with pytest.raises(ValueError, match="finite"):
            Thresholds({"band_pass": bad})
    for bad in (2.7, -5, 0, "x"):
        with pytest.raises(ValueError, match="compression_k"):
            Thresholds({"compression_k": bad})
    assert Thresholds({"compression_k": "50"}).compression_k == 50


def test_judge_is_exact_at_the_boundary():
    # 2 items out of 100 is exactly 0.02 (the float difference 0.02000000000000002 is not)
    assert judge(0.52 - 0.50, pass_at=0.02, higher_is_better=False)[0] == PASS
    assert judge(0.6, pass_at=0.6, warn_at=0.5)[0] == PASS
    assert judge(0.55, pass_at=0.6, warn_at=0.5) == (WARN, -0.05)
    assert judge(0.4, pass_at=0.6, warn_at=0.5)[0] == FAIL
    with pytest.raises(ValueError, match="value nan is not a finite number"):
        judge(float("nan"), pass_at=0.5)


def test_report_is_deterministic_across_calls():
    r = stable_records()
    assert dumps_report(audit(r, n_boot=200)) == dumps_report(audit(r, n_boot=200))


def test_import_graph_is_acyclic_and_layered():
    """Computation never imports renderers or pytest glue; checks import nothing from
    ``reports`` (the table model lives below both); no cycles, imports inside functions,
    ``importlib.import_module("...")`` calls and lazy ``"module:attr"`` targets included
    (issue 21)."""
    code = textwrap.dedent("""
        import ast, pathlib, sys
        root = pathlib.Path("leaderboard_audit")
        mods = {}
        for p in root.rglob("*.py"):
            name = ".".join(p.with_suffix("").parts)
            if name.endswith(".__init__"):
                name = name[: -len(".__init__")]
            mods[name] = p
        def resolve(mod, node):
            base = mod.split(".")
            if mods[mod].name != "__init__.py":
                base = base[:-1]
            if node.level:
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            return target
        edges = {m: set() for m in mods}
        for m, p in mods.items():
            for node in ast.walk(ast.parse(p.read_text())):
                if isinstance(node, ast.ImportFrom):
                    t = resolve(m, node)
                    names = [t] + [f"{t}.{a.name}" for a in node.names]
                    edges[m] |= {n for n in names if n in mods and n != m}
                elif isinstance(node, ast.Import):
                    edges[m] |= {a.name for a in node.names if a.name in mods}
                elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", ""))
                      == "import_module" and node.args and isinstance(node.args[0], ast.Constant)):
                    edges[m] |= {node.args[0].value} & set(mods)  # importlib.import_module("pkg.mod")
                elif isinstance(node, ast.Constant) and isinstance(node.value, str) and ":" in node.value:
                    # a lazy "pkg.module:attr" target (the registries, the CLI dispatcher, the lazy API)
                    target = node.value.partition(":")[0]
                    if target in mods and target != m:
                        edges[m].add(target)
        # package __init__ edges to their own submodules are re-exports, not layering
        for m in list(edges):
            edges[m] = {t for t in edges[m] if not t.startswith(m + ".") and not m.startswith(t + ".")}
        color = {}
        def visit(m, stack):
            color[m] = 1
            for t in edges[m]:
                if color.get(t) == 1:
                    print("CYCLE", " -> ".join(stack + [m, t])); sys.exit(1)
                if not color.get(t):
                    visit(t, stack + [m])
            color[m] = 2
        for m in sorted(mods):
            if not color.get(m):
                visit(m, [])
        # and at package level (records, importers, checks, ... and the top-level modules)
        pkg = lambda m: ".".join(m.split(".")[:2])
        module_edges, edges = edges, {}
        for m, ts in module_edges.items():
            edges.setdefault(pkg(m), set()).update(pkg(t) for t in ts if pkg(t) != pkg(m))
        color = {}
        for m in sorted(edges):
            if not color.get(m):
                visit(m, [])
        edges = module_edges
        low = ("leaderboard_audit.metrics", "leaderboard_audit.records", "leaderboard_audit.checks.verdicts",
               "leaderboard_audit.engine")
        high = ("leaderboard_audit.reports.html", "leaderboard_audit.reports.markdown",
                "leaderboard_audit.reports.terminal", "leaderboard_audit.reports.submission_text",
                "leaderboard_audit.plugin", "leaderboard_audit.collect")
        # ast.walk sees imports inside functions too (lazy ones, e.g.
        # pytest_addoption: plugin.options -> formats), and lazy "module:attr" targets (cli.main -> cli.audit)
        assert "leaderboard_audit.formats" in edges["leaderboard_audit.plugin.options"], "lazy imports not seen"
        assert "leaderboard_audit.cli.audit" in edges["leaderboard_audit.cli.main"], "lazy targets not seen"
        # the thresholds' defaults are the checks' declarations: verdicts (below the checks) imports none
        assert not any(t.startswith("leaderboard_audit.checks") for t in edges["leaderboard_audit.checks.verdicts"] if t != "leaderboard_audit.checks")
        for m, ts in edges.items():
            if m.startswith("leaderboard_audit.checks"):
                bad = [t for t in ts if t.startswith("leaderboard_audit.reports")]
                if bad:
                    print("CHECK IMPORTS REPORTS", m, bad); sys.exit(1)
            if m.startswith(low):
                bad = [t for t in ts if t.startswith(high)]
                if bad:
                    print("UPWARD", m, bad); sys.exit(1)
        print("ok")
    """)
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=str(REPO),
    )
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stdout + out.stderr


def test_every_check_with_cases_gets_its_generated_test(pytester):
    """A check is its module: ``audits/test_checks.py`` generates ``test_<name>`` for every
    registered check (none for a bundled report section), so none can pass silently for
    want of a test module (issue 21's trap, closed without one)."""
    from helpers.builders import write

    recs = write(stable_records(), pytester.path / "recs")
    result = pytester.runpytest("--audit", str(recs), "-p", "no:cacheprovider", "--co", "-q")
    assert result.ret == 0, result.stdout.str()[-2000:]
    collected = {line.split("::")[1].split("[")[0] for line in result.outlines if "test_checks.py::" in line}
    report_only = {n for n, c in registry().items() if c.report_only}
    assert report_only >= {"flip", "compliance", "robust_subset", "averaged", "power"}
    assert collected == {f"test_{n}" for n in registry() if n not in report_only} - {"test_mix"}  # mix: 3+ benchmarks
    assert tuple(registry())[: len(BUILTIN)] == BUILTIN


def test_report_only_checks_have_no_cases():
    r = stable_records()
    by_check = cases(r)
    for name, check in registry().items():
        if check.report_only:
            assert by_check[name] == [], name


@pytest.mark.slow
def test_scope_results_carry_no_in_process_objects():
    """A scope's result is JSON-ready as it is (no ``Scope`` handle riding in it): the plugin
    keeps the handle apart (``audit_scope_computed``)."""
    from leaderboard_audit.plugin.results import json_normal
    from leaderboard_audit.engine import audit_scope, audit_scope_computed
    from leaderboard_audit.checks import Scope
    from leaderboard_audit.records.simulate import demo_spec, simulate

    rec = simulate(demo_spec(items_per_benchmark=30))
    s = audit_scope(rec, "pooled", n_boot=200)
    assert json_normal(json.loads(json.dumps(s))) and all(not k.startswith("_") for k in s)
    report, handle = audit_scope_computed(rec, "arc", n_boot=200)
    assert isinstance(handle, Scope) and json.loads(json.dumps(report)) == report


@pytest.mark.slow
def test_a_bundled_check_is_one_file(tmp_path):
    """docs/checks.md, "A bundled check: one file": its module, added to a copy of the package
    with no other edit, is registered in its place, collected as ``test_min_robust``, judged
    against its threshold and listed in ``pytest --help``."""
    import shutil

    doc = (REPO / "docs" / "checks.md").read_text(encoding="utf-8")
    block = doc.split("<!-- bundled-check:begin -->\n```python\n", 1)[1].split("```\n<!-- bundled-check:end -->", 1)[0]
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    pkg = shutil.copytree(REPO / "leaderboard_audit", tmp_path / "leaderboard_audit", ignore=ignore, symlinks=True)
    if (pkg / "audits").is_symlink() or (pkg / "audits").exists():
        (pkg / "audits").unlink() if (pkg / "audits").is_symlink() else shutil.rmtree(pkg / "audits")
    shutil.copytree(REPO / "audits", pkg / "audits", ignore=ignore)  # as the wheel installs them
    (pkg / "checks" / "min_robust.py").write_text(block, encoding="utf-8")
    recs = shutil.copytree(REPO / "fixtures" / "demo", tmp_path / "demo")
    env = {**__import__("os").environ, "PYTHONPATH": str(tmp_path)}

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, *args], capture_output=True, text=True, cwd=tmp_path, env=env)

    order = run("-c", "from leaderboard_audit.checks import registry; print(' '.join(registry()))")
    names = order.stdout.split()
    assert names[names.index("robust_subset") + 1 : names.index("robust_subset") + 3] == ["min_robust", "mix"], order
    pytest_args = ["-m", "pytest", "-p", "no:cacheprovider", "-p", "no:hypothesispytest", "--audit", str(recs)]
    passing = run(*pytest_args, "-q", "-k", "min_robust", "--audit-threshold", "min_robust=0", "--audit-report=a.json")
    assert "5 passed" in passing.stdout, passing.stdout[-2000:] + passing.stderr[-2000:]
    report = json.loads((tmp_path / "a.json").read_text())
    assert set(report["scopes"]["pooled"]["min_robust"]) == set(report["records"]["models"])
    failing = run(*pytest_args, "-q", "-k", "min_robust", "--audit-threshold", "min_robust=0.99")
    assert failing.returncode == 1 and "5 failed" in failing.stdout, failing.stdout[-2000:]
    assert "audit_min_robust" in run("-m", "pytest", "--help").stdout
