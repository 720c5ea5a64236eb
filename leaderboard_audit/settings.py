"""The audit's settings: one precedence rule, validated once, plain and serializable. Its
layer: below the checks (it reads their threshold declarations lazily), import-light for the
plugin's options.

Precedence for seed, boot, alpha, strict, allow_undecided and every threshold: command line > ini
(``audit_<name>`` in pytest.ini / tox.ini / setup.cfg / ``[tool.pytest.ini_options]``) >
``[tool.leaderboard_audit]`` in pyproject.toml > defaults. Every bad value is a
``SettingsError`` naming where it came from (the plugin turns it into a usage error).
The controller resolves them once and sends them to xdist workers (``workerinput``).
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any

DEFAULT_SEED = 1234
DEFAULT_BOOT = 10_000
DEFAULT_ALPHA = 0.05
MAX_BOOT = 1_000_000  # 10,000 is plenty; beyond a million the pair arrays take GBs
MIN_BOOT = 100
TABLE_KEYS = ("seed", "boot", "alpha", "strict", "allow_undecided", "intersect", "thresholds")
SUMMARY_CHOICES = ("short", "full", "none")  # --audit-summary (plugin.py reads it from here)


class SettingsError(ValueError):
    """A setting that cannot be used (the message names it and where it came from)."""


def find_pyproject(inipath: Path | None, invocation_dir: Path) -> Path | None:
    """pytest's own pyproject.toml if it uses one, else the nearest one at or above the
    invocation directory (pytest's rootdir can be pulled away by --audit PATH)."""
    if inipath is not None and Path(inipath).name == "pyproject.toml":
        return Path(inipath)
    here = Path(invocation_dir).resolve()
    for d in (here, *here.parents):
        if (d / "pyproject.toml").is_file():
            return d / "pyproject.toml"
    return None


def pyproject_table(path: Path | None) -> dict[str, Any]:
    """``[tool.leaderboard_audit]`` (unknown keys are errors: a ``band_pas`` typo must not pass)."""
    if path is None:
        return {}
    import tomllib

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SettingsError(f"{path}: cannot read [tool.leaderboard_audit]: {exc}") from None
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise SettingsError(f"{path}: 'tool' must be a table ([tool.leaderboard_audit]), got {type(tool).__name__}")
    table = tool.get("leaderboard_audit", {})
    if not isinstance(table, dict):
        raise SettingsError(f"{path}: [tool.leaderboard_audit] must be a table")
    from .checks import default_thresholds

    known = set(TABLE_KEYS) | set(default_thresholds())
    unknown = sorted(set(table) - known)
    if unknown:
        raise SettingsError(f"{path}: unknown key(s) {unknown} in [tool.leaderboard_audit]; known: {sorted(known)}")
    nested = table.get("thresholds", {})
    if not isinstance(nested, dict):
        raise SettingsError(f"{path}: [tool.leaderboard_audit.thresholds] must be a table")
    bad = sorted(set(nested) - set(default_thresholds()))
    if bad:
        raise SettingsError(
            f"{path}: unknown threshold(s) {bad} in [tool.leaderboard_audit.thresholds]; "
            f"known: {sorted(default_thresholds())}"
        )
    return table


def _int(name: str, where: str, lo: int, hi: int | None = None) -> Callable[[Any], int]:
    def conv(v: Any) -> int:
        if isinstance(v, bool):
            raise SettingsError(f"{where} {name}={v!r} is not a whole number")
        try:
            x = int(str(v).strip()) if not isinstance(v, int) else v
        except ValueError:
            raise SettingsError(f"{where} {name}={v!r} is not a whole number") from None
        if x < lo or (hi is not None and x > hi):
            bound = f"between {lo:,} and {hi:,}" if hi is not None else f">= {lo}"
            raise SettingsError(f"{where} {name}={v!r} must be {bound}")
        return x

    return conv


def _alpha(where: str) -> Callable[[Any], float]:
    def conv(v: Any) -> float:
        try:
            x = float(v)
        except (TypeError, ValueError):
            raise SettingsError(f"{where} alpha={v!r} is not a number") from None
        if not (math.isfinite(x) and 0 < x < 1):
            raise SettingsError(f"{where} alpha={v!r} must be between 0 and 1")
        return x

    return conv


def _bool(name: str, where: str) -> Callable[[Any], bool]:
    def conv(v: Any) -> bool:
        if isinstance(v, bool):
            return v
        s = str(v).strip().lower()
        if s in ("1", "true", "yes", "on"):
            return True
        if s in ("0", "false", "no", "off", ""):
            return False
        raise SettingsError(f"{where} {name}={v!r} is not a boolean")

    return conv


def resolve(
    *,
    cli: dict[str, Any],
    ini: dict[str, Any],
    table: dict[str, Any],
    table_path: Path | None,
    cli_thresholds: list[str],
    flag_prefix: str = "--audit-",
) -> dict[str, Any]:
    """Merge the three sources (see the module docstring) into plain settings.
    ``flag_prefix`` names the command-line options in messages (``--`` for the CLI)."""
    from .checks import default_thresholds
    from .checks import Thresholds

    tname = f"{table_path} [tool.leaderboard_audit]" if table_path else "[tool.leaderboard_audit]"
    out: dict[str, Any] = {}
    specs: dict[str, tuple[Any, Callable[[str], Callable[[Any], Any]]]] = {
        "seed": (DEFAULT_SEED, lambda w: _int("seed", w, 0, 2**128)),
        "boot": (DEFAULT_BOOT, lambda w: _int("boot", w, MIN_BOOT, MAX_BOOT)),
        "alpha": (DEFAULT_ALPHA, _alpha),
        "strict": (False, lambda w: _bool("strict", w)),
        "allow_undecided": (False, lambda w: _bool("allow_undecided", w)),
        "intersect": (False, lambda w: _bool("intersect", w)),
    }
    for key, (default, conv) in specs.items():
        if cli.get(key) is not None:
            out[key] = conv(f"{flag_prefix}{key}")(cli[key])
        elif ini.get(key) not in (None, ""):
            out[key] = conv(f"ini audit_{key}")(ini[key])
        elif key in table:
            out[key] = conv(tname)(table[key])
        else:
            out[key] = default
    thresholds: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for k, v in {
        **{k: v for k, v in table.items() if k in default_thresholds()},
        **table.get("thresholds", {}),
    }.items():
        thresholds[k], sources[k] = v, tname
    for k in default_thresholds():
        v = ini.get(f"threshold:{k}")
        if v not in (None, "", []):
            thresholds[k], sources[k] = v, f"ini audit_{k}"
    for item in cli_thresholds:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not value.strip():
            raise SettingsError(
                f"{flag_prefix}threshold {item!r}: expected NAME=VALUE, e.g. band_pass=0.03 "
                f"(names: {', '.join(sorted(default_thresholds()))})"
            )
        if name not in default_thresholds():
            raise SettingsError(
                f"{flag_prefix}threshold {item!r}: unknown threshold {name!r} "
                f"(names: {', '.join(sorted(default_thresholds()))})"
            )
        thresholds[name], sources[name] = value.strip(), f"{flag_prefix}threshold"
    for name, value in thresholds.items():
        try:
            Thresholds({name: value})
        except ValueError as exc:
            raise SettingsError(f"{sources[name]}: {exc}") from None
    out["thresholds"] = {k: thresholds[k] for k in sorted(thresholds)}
    return out


@dataclass(frozen=True)
class Settings:
    """One run's settings, resolved and checked once (``resolve_settings`` for the numbers, the
    front end for the rest), then read-only; an xdist worker receives them as ``as_json`` and
    rebuilds them with ``from_json``. ``path`` and ``sha256`` may be filled in later by the run
    (``--audit-collect`` produces the records; the fingerprint is taken as they load)."""

    seed: int = DEFAULT_SEED
    boot: int = DEFAULT_BOOT
    alpha: float = DEFAULT_ALPHA
    strict: bool = False
    allow_undecided: bool = False  # the gate: undecided verdicts on cells a newcomer withheld warn
    intersect: bool = False
    thresholds: Mapping[str, Any] = field(default_factory=dict)
    path: str | None = None
    format: str = "auto"
    mapping: str | None = None
    metric: str | None = None
    report: str | None = None
    markdown: str | None = None
    html: str | None = None
    leaderboard: str | None = None
    collect: str | None = None
    submission: tuple[str, ...] = ()
    gate: tuple[str, ...] = ()
    summary: str = "short"
    cache: str | None = None
    workers: int = 1
    sha256: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "thresholds", MappingProxyType(dict(self.thresholds)))
        object.__setattr__(self, "submission", tuple(self.submission))
        object.__setattr__(self, "gate", tuple(self.gate))

    def as_json(self) -> str:
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        d.update(thresholds=dict(self.thresholds), submission=list(self.submission), gate=list(self.gate))
        return json.dumps(d, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Settings:
        return cls(**json.loads(text))

    def replace(self, **changes: Any) -> Settings:
        return dataclasses.replace(self, **changes)


INI_KEYS = ("seed", "boot", "alpha", "strict", "allow_undecided")  # ini ``audit_<key>`` (thresholds: ``audit_<name>``)


def resolve_settings(
    *,
    cli: dict[str, Any],
    cli_thresholds: list[str],
    invocation_dir: Path,
    inipath: Path | None = None,
    ini: dict[str, Any] | None = None,
    flag_prefix: str = "--audit-",
) -> dict[str, Any]:
    """The one settings path of both front ends (``pytest --audit`` and
    ``leaderboard-audit audit``): find the pyproject table, then ``resolve``
    (command line > ini > ``[tool.leaderboard_audit]`` > defaults). The standalone CLI
    has no pytest ini (``ini`` empty)."""
    table_path = find_pyproject(inipath, invocation_dir)
    return resolve(
        cli=cli,
        ini=ini or {},
        table=pyproject_table(table_path),
        table_path=table_path,
        cli_thresholds=cli_thresholds,
        flag_prefix=flag_prefix,
    )


def bundled_threshold_names() -> tuple[str, ...]:
    """The bundled checks' threshold names (each check class's ``thresholds = {...}``), read from
    the checks' source text without importing them (numpy), for pytest's ini registration:
    ``pytest --help`` stays import-light (~2 ms), and a bundled check declares its thresholds in
    one place (``tests/checks/test_check_registry.py`` checks the two agree). Third-party
    checks' thresholds are set through ``[tool.leaderboard_audit]`` or ``--audit-threshold``."""
    import re

    declared = re.compile(r"^    thresholds(?:\s*:[^=\n]*)?\s*=\s*\{(.*?)\}", re.M | re.S)
    names: set[str] = set()
    for path in sorted((Path(__file__).parent / "checks").glob("*.py")):
        for body in declared.findall(path.read_text(encoding="utf-8")):
            names.update(re.findall(r"[\"']([A-Za-z_][A-Za-z0-9_]*)[\"']\s*:", body))
    return tuple(sorted(names))


__all__ = [
    "DEFAULT_ALPHA",
    "Settings",
    "bundled_threshold_names",
    "DEFAULT_BOOT",
    "DEFAULT_SEED",
    "INI_KEYS",
    "MAX_BOOT",
    "MIN_BOOT",
    "SUMMARY_CHOICES",
    "SettingsError",
    "find_pyproject",
    "pyproject_table",
    "resolve",
    "resolve_settings",
]
