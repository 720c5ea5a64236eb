"""The harness legend: what each configuration key means (docs/spec/RECORDS.md, grid.json)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from .axis_groups import AXIS_GROUPS, check_axis_groups
from .errors import ProblemLog, RecordsError

FORMAT = "leaderboard-audit/records-v1"
DEFAULT_REFERENCE = "gen|letter_plain|p0"

# The paper's Table 4: entry j is the original option shown in display slot j.
PAPER_ORDERINGS: dict[str, tuple[int, ...]] = {
    "p0": (0, 1, 2, 3),
    "p1": (1, 3, 2, 0),
    "p2": (0, 1, 3, 2),
    "p3": (0, 2, 3, 1),
    "p4": (3, 0, 2, 1),
    "p5": (2, 3, 1, 0),
}

_GEN_KEY = re.compile(r"^gen\|([^|]+)\|([^|]+)$")
_LL_KEY = re.compile(r"^ll\|([^|]+)$")
_CORE = ("key", "scoring", "template", "ordering", "permutation")


@dataclass(frozen=True)
class Config:
    """One harness configuration: scoring x template x ordering."""

    key: str
    scoring: str
    template: str | None
    ordering: str | None
    permutation: tuple[int, ...] | None
    extra: dict[str, Any] = field(default_factory=dict, compare=True, hash=False)

    def to_json(self) -> dict[str, Any]:
        out = dict(self.extra)
        out.update(
            key=self.key,
            scoring=self.scoring,
            template=self.template,
            ordering=self.ordering,
            permutation=None if self.permutation is None else list(self.permutation),
        )
        return out


@dataclass(frozen=True)
class Grid:
    """The legend: configurations in column order and the reference key."""

    configs: tuple[Config, ...]
    reference: str
    inferred: bool = False
    extra: dict[str, Any] = field(default_factory=dict, hash=False)

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(c.key for c in self.configs)

    @property
    def reference_index(self) -> int:
        return self.keys.index(self.reference)

    def index(self, key: str) -> int:
        return self.keys.index(key)

    def __len__(self) -> int:
        return len(self.configs)

    @property
    def axis_groups(self) -> dict[str, tuple[str, ...]] | None:
        """The declared axes (grid.json ``axis_groups``, validated by ``parse_grid``), or None."""
        raw = self.extra.get(AXIS_GROUPS)
        return None if raw is None else {a: tuple(g) for a, g in raw.items()}

    def to_json(self) -> dict[str, Any]:
        out = dict(self.extra)
        out.update(format=FORMAT, reference=self.reference, configs=[c.to_json() for c in self.configs])
        return out


def config_from_key(key: str) -> Config | None:
    """Infer a configuration from the key convention, or None if it does not follow it."""
    m = _GEN_KEY.match(key)
    if m:
        template, ordering = m.groups()
        perm = PAPER_ORDERINGS.get(ordering)
        return Config(key, "gen", template, ordering, perm)
    m = _LL_KEY.match(key)
    if m:
        return Config(key, "ll", m.group(1), None, None)
    return None


def infer_grid(keys: list[str], source: str) -> Grid:
    """Legend from the key convention, used when grid.json is missing."""
    log = ProblemLog()
    configs = []
    for key in keys:
        cfg = config_from_key(key)
        if cfg is None:
            log.add(
                source,
                None,
                f"config key {key!r} does not follow the convention 'gen|<template>|<ordering>' or 'll|<template>'",
                fix="add a grid.json legend next to the records",
            )
        else:
            configs.append(cfg)
    log.raise_if_any()
    if DEFAULT_REFERENCE not in keys:
        raise RecordsError.one(
            source,
            None,
            f"no grid.json and the default reference {DEFAULT_REFERENCE!r} is not among the config keys",
            fix="add a grid.json that names the reference",
        )
    return Grid(tuple(configs), DEFAULT_REFERENCE, inferred=True)


def parse_grid(obj: Any, source: str) -> Grid:
    """Validate a decoded grid.json object."""

    def bad(msg: str, fix: str | None = None) -> RecordsError:
        return RecordsError.one(source, None, msg, fix=fix)

    if not isinstance(obj, dict):
        raise bad("grid.json must hold a JSON object")
    fmt = obj.get("format", FORMAT)
    if fmt != FORMAT:
        raise bad(f"format is {fmt!r}, expected {FORMAT!r}")
    raw = obj.get("configs")
    if not isinstance(raw, list) or not raw:
        raise bad("'configs' must be a non-empty list")
    log = ProblemLog()
    configs: list[Config] = []
    seen: set[str] = set()
    for n, c in enumerate(raw):
        cfg = _parse_config(n, c, seen, log, source)
        if cfg is not None:
            seen.add(cfg.key)
            configs.append(cfg)
    log.raise_if_any()
    ref = obj.get("reference", DEFAULT_REFERENCE)
    if not isinstance(ref, str):
        raise bad(f"'reference' must be a config key (a string), got {ref!r}")
    if ref not in seen:
        raise bad(f"reference {ref!r} is not one of the configs' keys")
    extra = {k: v for k, v in obj.items() if k not in ("format", "reference", "configs")}
    if extra.get(AXIS_GROUPS) is not None:  # null: absent
        check_axis_groups(extra[AXIS_GROUPS], [c.key for c in configs], ref, source)
    return Grid(tuple(configs), ref, inferred=False, extra=extra)


def _parse_config(n: int, c: Any, seen: set[str], log: ProblemLog, source: str) -> Config | None:
    """``configs[n]``: missing fields come from the key convention; problems go to ``log``."""
    if not isinstance(c, dict) or not isinstance(c.get("key"), str) or not c["key"]:
        log.add(source, None, f"configs[{n}] needs a non-empty string 'key'")
        return None
    key = c["key"]
    if key in seen:
        log.add(source, None, f"configs[{n}]: duplicate key {key!r}")
        return None
    guess = config_from_key(key)
    scoring = c.get("scoring", guess.scoring if guess else None)
    if not isinstance(scoring, str):
        log.add(source, None, f"configs[{n}] ({key}): 'scoring' must be a string")
        return None
    template = c.get("template", guess.template if guess else None)
    ordering = c.get("ordering", guess.ordering if guess else None)
    perm = c.get("permutation", guess.permutation if guess else None)
    if perm is not None:
        if (
            not isinstance(perm, list | tuple)
            or not all(type(p) is int for p in perm)
            or sorted(perm) != list(range(len(perm)))
        ):
            log.add(
                source,
                None,
                f"configs[{n}] ({key}): 'permutation' must be a permutation of 0..n-1 or null, got {perm!r}",
            )
            return None
        perm = tuple(perm)
    for name, val in (("template", template), ("ordering", ordering)):
        if val is not None and not isinstance(val, str):
            log.add(source, None, f"configs[{n}] ({key}): {name!r} must be a string or null")
    extra = {k: v for k, v in c.items() if k not in _CORE}
    return Config(key, scoring, template, ordering, perm, extra)


PAPER_GEN_TEMPLATES = ("letter_plain", "letter_paren", "digit_labels", "instruction")
PAPER_LL_TEMPLATES = ("cloze_plain", "cloze_question")


def paper_grid() -> Grid:
    """The paper's 26 configurations (Tables 4-5) as a bare legend (no template texts)."""
    configs = [Config(f"gen|{t}|{o}", "gen", t, o, p) for t in PAPER_GEN_TEMPLATES for o, p in PAPER_ORDERINGS.items()]
    configs += [Config(f"ll|{t}", "ll", t, None, None) for t in PAPER_LL_TEMPLATES]
    return Grid(tuple(configs), DEFAULT_REFERENCE)
