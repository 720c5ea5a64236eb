"""One registry type for every family that plugs in (issue 21): the ``Registry`` type,
format and engine names written in one place each, third-party importers through an
entry point, and docs/importers.md's table of formats equal to the registry."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from leaderboard_audit.collect.engines import ENGINES, EngineSpec
from leaderboard_audit.formats import IMPORTERS, formats_markdown, read_declaration, source_patterns
from leaderboard_audit.registry import Registry, RegistryError, UnknownNameError, name_key
from helpers.paths import REPO

ROOT = REPO
PACKAGE = ROOT / "leaderboard_audit"


def _string_constants(path: Path):
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) < 64:
            yield node.lineno, node.value


def _where_named(names: dict[str, str]) -> dict[str, set[str]]:
    """canonical name -> the package files (relative) holding a string literal equal to
    one of its spellings (compared as lookups compare: case and _/- ignored)."""
    out: dict[str, set[str]] = {}
    for p in sorted(PACKAGE.rglob("*.py")):
        for _, s in _string_constants(p):
            canon = names.get(name_key(s))
            if canon is not None:
                out.setdefault(canon, set()).add(p.relative_to(ROOT).as_posix())
    return out


def test_every_format_name_is_written_only_in_its_importer_module():
    names = {name_key(n): c for c in IMPORTERS.names() for n in (c, *IMPORTERS.aliases(c))}
    assert {"lm-eval", "lmeval", "helm"} <= set(names)
    for canon, files in _where_named(names).items():
        own = IMPORTERS.origin(canon).replace(".", "/") + ".py"
        assert files == {own}, f"format {canon!r} is written outside {own}: {sorted(files - {own})}"


# the same words as Python distribution names (versions in the manifest, a find_spec), not engines
ENGINE_WORDS_AS_PACKAGES = {
    "leaderboard_audit/collect/manifest.py",
    "leaderboard_audit/collect/models.py",
    "leaderboard_audit/collect/quiet.py",  # the vllm package's logger, quieted while collecting
    "leaderboard_audit/importers/inspect_ai.py",  # Inspect's own provider prefixes ("vllm/<model>"), not our engines
}


def test_every_engine_name_is_written_only_in_the_engines_package():
    names = {name_key(n): c for c in ENGINES.names() for n in (c, *ENGINES.aliases(c))}
    for canon, files in _where_named(names).items():
        stray = {f for f in files if not f.startswith("leaderboard_audit/collect/engines/")}
        assert stray <= ENGINE_WORDS_AS_PACKAGES, f"engine {canon!r} is written outside the engines: {sorted(stray)}"


def test_engines_declare_their_placement():
    assert {s.placement for s in ENGINES.values()} <= {"gpu", "cpu", "http"}
    assert ENGINES["HF"].name == "transformers"  # alias, any case
    from leaderboard_audit.collect.distributed import plan_slots

    gpu = [n for n in ENGINES.names() if ENGINES[n].placement == "gpu"]
    other = [n for n in ENGINES.names() if ENGINES[n].placement != "gpu"]
    assert gpu and other
    assert plan_slots({"GPU": 2, "CPU": 8}, engine=gpu[0]).num_gpus == 1.0
    for name in other:
        assert plan_slots({"GPU": 2, "CPU": 8}, engine=name).num_gpus == 0.0


def test_docs_table_of_formats_is_the_registry():
    text = (ROOT / "docs" / "importers.md").read_text(encoding="utf-8")
    begin, end = "<!-- formats:begin -->\n", "\n<!-- formats:end -->"
    assert begin in text and end in text
    assert text.split(begin, 1)[1].split(end, 1)[0] == formats_markdown(), (
        "docs/importers.md's table of formats differs from the registry: paste formats_markdown()"
    )


# -- the Registry type -------------------------------------------------------------------


def test_registry_names_aliases_and_lookup_spelling():
    reg: Registry[int] = Registry("widget")
    reg.register("lm-eval", 1, aliases=("lmeval", "LM_Evaluation_Harness"))
    reg.add("helm")(2)
    assert reg.names() == ("lm-eval", "helm") and list(reg) == ["lm-eval", "helm"] and len(reg) == 2
    for spelling in ("lm-eval", "LM_EVAL", " lmeval ", "lm-evaluation-harness"):
        assert spelling in reg and reg[spelling] == 1 and reg.canonical(spelling) == "lm-eval"
    assert reg.aliases("LMEVAL") == ("lmeval", "LM_Evaluation_Harness") and reg.aliases("helm") == ()
    assert reg.get("nope", None) is None and "nope" not in reg and 3 not in reg
    with pytest.raises(UnknownNameError, match=r"unknown widget 'nope'; known: lm-eval, helm") as info:
        reg["nope"]
    assert isinstance(info.value, KeyError) and isinstance(info.value, ValueError)
    assert reg.pop("LMEVAL") == 1 and reg.names() == ("helm",) and "lm-evaluation-harness" not in reg


def test_registry_refuses_a_second_entry_of_a_name_or_alias():
    reg: Registry[int] = Registry("widget")
    reg.register("a-b", 1, aliases=("ab",))
    for name, aliases in (("A_B", ()), ("c", ("AB",))):
        with pytest.raises(RegistryError, match="two widgets are named"):
            reg.register(name, 2, aliases=aliases)
    assert reg.names() == ("a-b",)  # a refused entry leaves nothing behind
    with pytest.raises(RegistryError, match="needs a name"):
        reg.register(" ", 3)
    reg.freeze()
    with pytest.raises(RegistryError, match="frozen"):
        reg.register("d", 4)


def test_registry_lazy_target_is_imported_on_first_lookup(tmp_path, monkeypatch):
    (tmp_path / "lazy_widget_mod.py").write_text("import sys\nLOADED = True\nTHING = {'x': 1}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    reg: Registry[dict] = Registry("widget", validate=lambda origin, obj: dict(obj, checked=origin))
    reg.register("thing", lazy="lazy_widget_mod:THING")
    reg.register("broken", lazy="no_such_module_for_this_test:X", origin="entry point g:broken (x)")
    assert "thing" in reg and "lazy_widget_mod" not in sys.modules  # registered, not imported
    assert reg["thing"] == {"x": 1, "checked": "lazy_widget_mod:THING"} and "lazy_widget_mod" in sys.modules
    with pytest.raises(RegistryError, match=r"entry point g:broken \(x\) failed to load: ModuleNotFoundError"):
        reg["broken"]
    monkeypatch.delitem(sys.modules, "lazy_widget_mod")


def test_read_declaration_reads_the_literal_only():
    src = 'import numpy\nX = 1\nFORMAT_INFO = {\n    "name": "x",  # a comment\n    "patterns": ("*.x",),\n}\n'
    src += "def helper():\n    pass\n\ndef load_x(src, **o):\n    pass\n"
    assert read_declaration(src, "m.py") == {"name": "x", "patterns": ("*.x",), "loader": "load_x"}
    assert read_declaration("X = 1\n", "m.py") is None
    with pytest.raises(RegistryError, match="m.py: FORMAT_INFO is not a literal dict"):
        read_declaration('FORMAT_INFO = dict(name="x")\n', "m.py")


def test_fingerprint_patterns_come_from_the_registry():
    for name in IMPORTERS.names():
        assert set(IMPORTERS[name].patterns) < set(source_patterns(name)) <= set(source_patterns())


def test_registering_every_format_imports_no_importer():
    code = (
        "import sys; from leaderboard_audit.formats import audit_formats, IMPORTERS; "
        "from leaderboard_audit.collect.engines import ENGINES; "
        "names = audit_formats(); [s.patterns for s in IMPORTERS.values()]; ENGINES.names(); "
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'pandas', 'torch') "
        "or m.startswith(('leaderboard_audit.importers.', 'leaderboard_audit.records'))); "
        "print(' '.join(heavy) or 'light', ','.join(names))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    light, names = out.stdout.split()
    assert light == "light" and names.split(",")[:3] == ["auto", "records", "table"]


def test_importer_cli_refuses_an_option_its_format_does_not_declare(tmp_path, capsys):
    from leaderboard_audit.importers.cli import main

    takes = {n for n in IMPORTERS.names() if "match_by" in IMPORTERS[n].options}
    other = next(n for n in IMPORTERS.names() if n not in takes)
    assert main([other, str(tmp_path), "-o", str(tmp_path / "out"), "--match-by", "doc_id"]) == 4
    assert f"--match-by: not an option of {other}" in capsys.readouterr().err


# -- a third-party importer through the leaderboard_audit.importers entry point group ------

THIRD_PARTY = '''\
"""A third-party importer: one module."""
from pathlib import Path

FORMAT_INFO = {
    "name": "toyformat",
    "aliases": ("toy",),
    "description": "toy CSV logs",
    "source": "a folder holding one *.toy.csv",
    "patterns": ("*.toy.csv",),
    "options": {"intersect": "", "scale": "ignored, to show an own option"},
}


def load_toy(src, *, intersect=False, scale=None):
    from leaderboard_audit.records.table import read_table

    (table,) = Path(src).glob("*.toy.csv")
    return read_table(table, intersect=intersect)
'''


@pytest.fixture
def toy_site(tmp_path, monkeypatch):
    from helpers.builders import stable_records
    from leaderboard_audit.records.table import write_table

    from helpers.site import third_party_package

    site = third_party_package(
        tmp_path / "site", "toyimp", THIRD_PARTY, "leaderboard_audit.importers", "toyformat = toyimp"
    )
    src = tmp_path / "logs"
    src.mkdir()
    write_table(stable_records(), src / "run.toy.csv", write_grid=False)
    monkeypatch.setenv("PYTHONPATH", str(site))
    return site, src


def _run(*code_or_args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *code_or_args], capture_output=True, text=True, cwd=cwd)


@pytest.mark.slow
def test_third_party_importer_through_an_entry_point(toy_site, tmp_path):
    from helpers.builders import stable_records

    site, src = toy_site
    probe = textwrap.dedent("""
        import json, sys
        from leaderboard_audit.formats import IMPORTERS, audit_formats, source_patterns
        from leaderboard_audit.records.fingerprint import source_files
        spec = IMPORTERS["TOY"]
        out = {"formats": list(audit_formats()), "name": spec.name, "loader": spec.loader,
               "imported_before_load": "toyimp" in sys.modules,
               "files": [p.name for p in source_files(sys.argv[1], "toy")]}
        from leaderboard_audit.importers import load
        out["shape"] = list(load(sys.argv[1], "toy", intersect=True).shape)
        print(json.dumps(out))
    """)
    got = _run("-c", probe, str(src), cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    out = json.loads(got.stdout)
    assert out["formats"][-1] == "toyformat" and out["name"] == "toyformat" and out["loader"] == "toyimp:load_toy"
    assert out["imported_before_load"] is False  # declared from its source, imported on load
    assert out["files"] == ["run.toy.csv"] and tuple(out["shape"]) == stable_records().shape

    cli = _run(
        "-m", "leaderboard_audit.cli", "import", "toyformat", str(src), "-o", str(tmp_path / "rec"), cwd=tmp_path
    )
    assert cli.returncode == 0, cli.stderr
    assert "imported toyformat" in cli.stdout and (tmp_path / "rec" / "grid.json").is_file()
    helped = _run("-m", "leaderboard_audit.cli", "import", "-h", cwd=tmp_path).stdout
    helped = " ".join(helped.split())  # argparse wraps the help at the terminal width
    assert "toyformat (toy CSV logs)" in helped and "--scale" in helped


def test_third_party_importer_name_collision_names_the_entry_point(toy_site, tmp_path):
    site, _ = toy_site
    first = IMPORTERS.names()[0]
    (site / "toyimp.py").write_text(THIRD_PARTY.replace('"aliases": ("toy",)', f'"aliases": ("{first}",)'))
    got = _run("-c", "from leaderboard_audit.formats import IMPORTERS; IMPORTERS.names()", cwd=tmp_path)
    assert got.returncode != 0
    assert f"two import formats are named {first!r}" in got.stderr
    assert "entry point leaderboard_audit.importers:toyformat (toyimp)" in got.stderr


def test_engine_spec_is_the_engine_entry_type():
    spec = EngineSpec("x", "http", "m:C")
    assert spec.local_weights and not spec.cpu_binds and spec.tokenizer is None


# -- an engine: declared at its class; a third-party one through the entry point group -----

TOY_ENGINE = '''\
"""A third-party engine: one module, one class."""
from leaderboard_audit.collect.engines import engine


@engine("toy-engine", "http", description="answers from a lookup table", aliases=("toy",), local_weights=False)
class ToyEngine:
    def __init__(self, model_path, dtype="auto", **options):
        self.model_path = model_path
'''


def test_bundled_engines_are_declared_at_their_classes():
    from leaderboard_audit.collect.engines import BUNDLED_MODULES, DEFAULT_ENGINE
    from leaderboard_audit.collect.engines.hf_engine import HFEngine

    assert ENGINES.names()[0] == DEFAULT_ENGINE  # the first bundled module's engine
    # ==, not is: a pytester run in this process may have imported hf_engine and dropped it
    # from sys.modules again, so this import can make a second, equal class
    assert HFEngine.engine_spec == ENGINES["hf"] and HFEngine.engine_aliases == ("hf",)
    assert {ENGINES[n].factory.partition(":")[0].rsplit(".", 1)[1] for n in ENGINES.names()} == set(BUNDLED_MODULES)
    with pytest.raises(ValueError, match="placement 'tpu'"):
        from leaderboard_audit.collect.engines import engine

        engine("x", "tpu")


def test_third_party_engine_through_an_entry_point(tmp_path, monkeypatch):
    from helpers.site import third_party_package

    site = third_party_package(
        tmp_path / "site", "toyengine", TOY_ENGINE, "leaderboard_audit.engines", "toy-engine = toyengine:ToyEngine"
    )
    monkeypatch.setenv("PYTHONPATH", str(site))
    probe = textwrap.dedent("""
        import json
        from leaderboard_audit.collect.engines import ENGINES, make_engine
        spec = ENGINES["TOY"]
        made = make_engine("toy", "/models/x")
        print(json.dumps({"names": list(ENGINES.names()), "placement": spec.placement,
                          "factory": spec.factory, "made": type(made).__name__, "path": made.model_path}))
    """)
    got = _run("-c", probe, cwd=tmp_path)
    assert got.returncode == 0, got.stderr
    out = json.loads(got.stdout)
    assert out["names"][-1] == "toy-engine" and out["placement"] == "http"
    assert out["factory"] == "toyengine:ToyEngine" and (out["made"], out["path"]) == ("ToyEngine", "/models/x")
    helped = " ".join(_run("-m", "leaderboard_audit.collect.cli", "-h", cwd=tmp_path).stdout.split())
    assert "toy-engine" in helped
