"""The importers' registry: every ``--audit-format`` / ``leaderboard-audit import`` format
(issue 21). Low and import-light (standard library only), so the records layer (the
source fingerprint), the CLIs and the pytest plugin read it without importing the
importers (``leaderboard_audit/importers/``, which import numpy and the records layer).

Its layer: below ``records/``, beside ``registry.py`` and ``settings.py`` at the package root.
It cannot move into ``importers/`` while the records layer's fingerprint reads the patterns
(``importers/`` imports ``records/``: a package cycle, refused by
``tests/checks/test_check_registry.py``), nor into ``records/``, which imports numpy.

Every importer is one module of ``leaderboard_audit/importers/`` that declares itself at
module level with a ``FORMAT_INFO`` dict literal and defines its loader (docs/importers.md,
"Adding an importer")::

    FORMAT_INFO = {
        "name": "myformat",                 # --audit-format / `leaderboard-audit import` name
        "aliases": ("my-format",),          # other spellings (case and _/- never matter)
        "description": "MyTool's logs",     # one line, for --help and docs
        "source": "the folder of logs",     # what SRC is, for `import --help`
        "patterns": ("*.mylog",),           # the files it reads (the source fingerprint)
        "options": {"metric": "score (default) or another field"},  # keyword -> help
        "loader": "load_myformat",          # load_myformat(src, **options) -> Records
    }

``IMPORTERS`` (a :class:`~leaderboard_audit.registry.Registry` of :class:`ImporterSpec`)
reads that literal from the module's source without importing the module (the parser
and numpy load on the first ``load``), so ``pytest --help`` stays import-light.
Third-party importers arrive through the ``leaderboard_audit.importers`` entry point
group; the value names a module with the same ``FORMAT_INFO``.
"""

from __future__ import annotations

import ast
import io
import os
import re
import tokenize
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .registry import Registry, RegistryError, load_target

PACKAGE = "leaderboard_audit.importers"  # the bundled importers' package
ENTRY_POINT_GROUP = "leaderboard_audit.importers"
MAPPING_FILE = "audit_mapping.json"  # picked up from SRC when no mapping is given
RECORDS_FORMATS = ("auto", "records", "table")  # the records layer's own --audit-format values
NOT_IMPORTERS = ("cli",)  # modules of that package that are not importers
DECLARATION = "FORMAT_INFO"
_DECL_RE = re.compile(rf"^{DECLARATION}\s*(?::[^=\n]*)?=", re.M)
_LOADER_RE = re.compile(r"^def (load_\w+)\(", re.M)


@dataclass(frozen=True)
class ImporterSpec:
    """One importer: what its module's ``FORMAT_INFO`` declares, and its loader target."""

    name: str
    loader: str  # "package.module:function"
    aliases: tuple[str, ...] = ()
    description: str = ""
    source: str = ""
    patterns: tuple[str, ...] = ()
    options: Mapping[str, str] = field(default_factory=dict)  # keyword -> help ("" = the shared help)

    def load(self, src: str | os.PathLike[str], **opts: Any):
        unknown = sorted(k for k, v in opts.items() if k not in self.options and v not in (None, False))
        if unknown:
            raise ValueError(f"{self.name} takes no option(s) {unknown}; its options: {sorted(self.options)}")
        return load_target(self.loader)(src, **{k: v for k, v in opts.items() if k in self.options})


def read_declaration(text: str, where: str) -> dict[str, Any] | None:
    """The ``FORMAT_INFO = {...}`` literal of a module's source, read without importing
    it (only that statement is tokenized and parsed); ``None`` if it has none."""
    m = _DECL_RE.search(text)
    if m is None:
        return None
    end = None
    for tok in tokenize.generate_tokens(io.StringIO(text[m.start() :]).readline):
        if tok.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
            end = tok.start
            break
    lines = text[m.start() :].splitlines(keepends=True)
    snippet = "".join(lines[: end[0] - 1]) + lines[end[0] - 1][: end[1]] if end else text[m.start() :]
    try:
        value = ast.literal_eval(ast.parse(snippet).body[0].value)  # type: ignore[attr-defined]
    except (SyntaxError, ValueError) as exc:
        raise RegistryError(f"{where}: {DECLARATION} is not a literal dict ({exc})") from None
    if not isinstance(value, dict):
        raise RegistryError(f"{where}: {DECLARATION} is not a dict")
    if "loader" not in value:
        found = _LOADER_RE.search(text)
        if found:
            value["loader"] = found.group(1)
    return value


def spec_from_declaration(info: Mapping[str, Any], module: str, where: str) -> ImporterSpec:
    def strings(key: str) -> tuple[str, ...]:
        v = info.get(key, ())
        v = (v,) if isinstance(v, str) else v
        if not isinstance(v, (list, tuple)) or not all(isinstance(x, str) for x in v):
            raise RegistryError(f"{where}: {DECLARATION}[{key!r}] must be a list of strings")
        return tuple(v)

    name, loader = info.get("name"), info.get("loader")
    if not isinstance(name, str) or not name.strip():
        raise RegistryError(f"{where}: {DECLARATION} needs a 'name'")
    if not isinstance(loader, str) or not loader:
        raise RegistryError(f"{where}: {DECLARATION} needs a 'loader' (or a def load_<name>(src, **options))")
    opts = info.get("options", {})
    opts = {o: "" for o in opts} if isinstance(opts, (list, tuple)) else opts
    if not isinstance(opts, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in opts.items()):
        raise RegistryError(f"{where}: {DECLARATION}['options'] must map option names to help strings")
    return ImporterSpec(
        name=name,
        loader=loader if ":" in loader else f"{module}:{loader}",
        aliases=strings("aliases"),
        description=str(info.get("description", "")),
        source=str(info.get("source", "")),
        patterns=strings("patterns"),
        options=dict(opts),
    )


def spec_of_module(module: str, path: Path | None = None) -> ImporterSpec | None:
    """The importer module ``module`` declares (from its source file when it has one,
    else from the imported module's ``FORMAT_INFO``)."""
    if path is None:
        import importlib.util

        found = importlib.util.find_spec(module)
        path = Path(found.origin) if found is not None and found.origin and found.origin.endswith(".py") else None
    info = read_declaration(path.read_text(encoding="utf-8"), str(path)) if path is not None else None
    if info is None and path is None:
        info = getattr(load_target(module), DECLARATION, None)
        if isinstance(info, dict) and "loader" not in info:
            loaders = [n for n in dir(load_target(module)) if n.startswith("load_")]
            info = {**info, "loader": loaders[0]} if len(loaders) == 1 else info
    return None if info is None else spec_from_declaration(info, module, path and str(path) or module)


def _bundled(reg: Registry[ImporterSpec]) -> None:
    for path in sorted((Path(__file__).parent / "importers").glob("*.py")):
        if path.stem.startswith("_") or path.stem in NOT_IMPORTERS:
            continue
        module = f"{PACKAGE}.{path.stem}"
        spec = spec_of_module(module, path)
        if spec is not None:
            reg.register(spec.name, spec, aliases=spec.aliases, origin=module)


def _from_entry_point(ep: Any) -> tuple[str, ImporterSpec, tuple[str, ...]]:
    module = ep.value.partition(":")[0].strip()
    try:
        spec = spec_of_module(module)
    except RegistryError:
        raise
    except Exception as exc:  # a broken third-party package: name it
        raise RegistryError(
            f"entry point {ENTRY_POINT_GROUP}:{ep.name} ({ep.value}) failed to load: {type(exc).__name__}: {exc}"
        ) from None
    if spec is None:
        raise RegistryError(f"entry point {ENTRY_POINT_GROUP}:{ep.name} ({ep.value}) declares no {DECLARATION}")
    return spec.name, spec, spec.aliases


IMPORTERS: Registry[ImporterSpec] = Registry(
    "import format", group=ENTRY_POINT_GROUP, bundled=_bundled, from_entry_point=_from_entry_point
)


def format_names() -> tuple[str, ...]:
    """The importers' canonical names, in registration order (bundled first)."""
    return IMPORTERS.names()


def audit_formats() -> tuple[str, ...]:
    """Every ``--audit-format`` value: the records layer's own, then the importers."""
    return RECORDS_FORMATS + IMPORTERS.names()


def audit_format_arg() -> Any:
    """``type=`` of every ``--audit-format`` / ``--format``: a records format, or an importer's
    name or alias (any case), as its canonical name."""
    return IMPORTERS.arg_type(RECORDS_FORMATS)


def audit_format_metavar() -> str:
    return IMPORTERS.metavar(RECORDS_FORMATS)


def is_importer(fmt: str) -> bool:
    return fmt not in RECORDS_FORMATS and fmt in IMPORTERS


def source_patterns(fmt: str | None = None) -> tuple[str, ...]:
    """The file patterns importer ``fmt`` reads (every importer's when ``None``), plus the
    mapping file it picks up."""
    specs = [IMPORTERS[fmt]] if fmt is not None else list(IMPORTERS.values())
    out: list[str] = []
    for s in specs:
        out += [p for p in s.patterns if p not in out]
    return tuple(out) + (MAPPING_FILE,)


def formats_help(attr: str = "description") -> str:
    """``name: <attr>`` of every importer, joined with "; " (for --help texts)."""
    return "; ".join(f"{s.name}: {getattr(s, attr)}" for s in IMPORTERS.values() if getattr(s, attr))


def metric_help() -> str:
    """``name: <its metric option's help>`` of every importer that takes a metric."""
    return "; ".join(f"{s.name}: {s.options['metric']}" for s in IMPORTERS.values() if s.options.get("metric"))


def formats_markdown() -> str:
    """The table of formats docs/importers.md shows (a test keeps the two equal)."""

    def code(xs: Any) -> str:
        return ", ".join(f"`{x}`" for x in xs) or "—"

    rows = ["| format | aliases | reads | options | what it is |", "|---|---|---|---|---|"]
    for s in IMPORTERS.values():
        rows.append(f"| `{s.name}` | {code(s.aliases)} | {code(s.patterns)} | {code(s.options)} | {s.description} |")
    return "\n".join(rows)


__all__ = [
    "ENTRY_POINT_GROUP",
    "IMPORTERS",
    "MAPPING_FILE",
    "RECORDS_FORMATS",
    "ImporterSpec",
    "audit_format_arg",
    "audit_format_metavar",
    "audit_formats",
    "format_names",
    "formats_help",
    "formats_markdown",
    "is_importer",
    "metric_help",
    "read_declaration",
    "source_patterns",
]
