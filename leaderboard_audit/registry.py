"""One registry type for every family that plugs in (issue 21; lm-evaluation-harness's
``lm_eval/api/registry.py`` is the shape): checks, importers (formats), engines and
likelihood normalisations. Its layer: the bottom (standard library only); every family's
module imports it.

A :class:`Registry` maps names to entries. It has:

* names with aliases; lookups ignore case and read ``_`` as ``-`` (``LM_Eval`` finds
  ``lm-eval``); ``names()`` is the canonical names in registration order;
* a collision error (:class:`RegistryError`) that names both sides;
* lazy entries: ``register(name, lazy="package.module:attr")`` stores the target and
  imports it on first lookup, so registering a name imports nothing heavy;
* third-party entries through an entry point group (``leaderboard_audit.<family>``),
  read on first use; ``from_entry_point`` turns one entry point into (name, entry,
  aliases) for families whose entry is more than the object the entry point names;
* ``freeze()``: no registrations after it.

Import-light: this module imports only the standard library.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class RegistryError(ValueError):
    """An entry that cannot be registered or loaded (named in the message)."""


class UnknownNameError(RegistryError, KeyError):
    """A name no entry has (the message lists the known names)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def name_key(name: str) -> str:
    """The form names are compared in: case-folded, ``_`` read as ``-``, trimmed."""
    return str(name).strip().lower().replace("_", "-")


def load_target(target: str) -> Any:
    """``"package.module:attr"`` (or ``"package.module"``) -> the object; imports the module now."""
    module, _, attr = target.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split(".") if attr else ():
        obj = getattr(obj, part)
    return obj


class _Lazy:
    __slots__ = ("target",)

    def __init__(self, target: str) -> None:
        self.target = target


class Registry(Mapping[str, T], Generic[T]):
    """Name -> entry for one family. A read-only mapping over the canonical names
    (alias-aware ``in`` and ``[]``); ``register`` adds, ``get`` looks up."""

    def __init__(
        self,
        kind: str,
        *,
        group: str | None = None,
        bundled: Callable[[Registry[T]], None] | None = None,
        from_entry_point: Callable[[Any], tuple[str, Any, Iterable[str]]] | None = None,
        validate: Callable[[str, Any], Any] | None = None,
    ) -> None:
        self.kind, self.group = kind, group
        self._bundled, self._from_ep, self._validate = bundled, from_entry_point, validate
        self._entries: dict[str, Any] = {}  # canonical name -> entry or _Lazy
        self._keys: dict[str, str] = {}  # name_key(name or alias) -> canonical name
        self._aliases: dict[str, tuple[str, ...]] = {}
        self._origin: dict[str, str] = {}
        self._ready = bundled is None and group is None
        self._frozen = False

    # -- registering -------------------------------------------------------------------
    def register(
        self, name: str, entry: Any = None, *, lazy: str | None = None, aliases: Iterable[str] = (), origin: str = ""
    ) -> Any:
        """Add ``entry`` (or the ``lazy`` "module:attr" target) under ``name`` and ``aliases``."""
        if self._frozen:
            raise RegistryError(f"the {self.kind} registry is frozen; {name!r} cannot be added")
        aliases = tuple(a for a in aliases if name_key(a) != name_key(name))
        for n in (name, *aliases):
            k = name_key(n)
            if not k:
                raise RegistryError(f"a {self.kind} needs a name{f' ({origin})' if origin else ''}")
            if k in self._keys:
                other = self._keys[k]
                where = "".join(f" ({o})" for o in (self._origin.get(other), origin) if o)
                raise RegistryError(f"two {self.kind}s are named {n!r}: {other!r} and {name!r}{where}")
        for n in (name, *aliases):
            self._keys[name_key(n)] = name
        self._entries[name] = _Lazy(lazy) if lazy is not None else entry
        self._aliases[name], self._origin[name] = aliases, origin
        return entry

    def add(self, name: str, *, aliases: Iterable[str] = ()) -> Callable[[T], T]:
        """Decorator form of ``register``."""

        def deco(obj: T) -> T:
            self.register(name, obj, aliases=aliases)
            return obj

        return deco

    def pop(self, name: str) -> Any:
        """Remove ``name`` (and its aliases); returns its entry (e.g. a test's own)."""
        if self._frozen:
            raise RegistryError(f"the {self.kind} registry is frozen; {name!r} cannot be removed")
        canon = self.canonical(name)
        for n in (canon, *self._aliases.pop(canon)):
            del self._keys[name_key(n)]
        self._origin.pop(canon)
        return self._entries.pop(canon)

    def freeze(self) -> None:
        self._load()
        self._frozen = True

    def _load(self) -> None:
        if self._ready:
            return
        self._ready = True
        if self._bundled is not None:
            self._bundled(self)
        if self.group:
            from importlib.metadata import entry_points

            for ep in sorted(entry_points(group=self.group), key=lambda e: e.name):
                origin = f"entry point {self.group}:{ep.name} ({ep.value})"
                if self._from_ep is None:
                    self.register(ep.name, lazy=ep.value, origin=origin)
                    continue
                name, entry, aliases = self._from_ep(ep)
                self.register(name, entry, aliases=aliases, origin=origin)

    # -- looking up --------------------------------------------------------------------
    def canonical(self, name: str) -> str:
        """The canonical name of ``name`` or of an alias; ``UnknownNameError`` otherwise."""
        self._load()
        try:
            return self._keys[name_key(name)]
        except KeyError:
            raise UnknownNameError(f"unknown {self.kind} {name!r}; known: {', '.join(self.names())}") from None

    def get(self, name: str, default: Any = ...) -> T:  # type: ignore[override]
        try:
            canon = self.canonical(name)
        except UnknownNameError:
            if default is not ...:
                return default
            raise
        entry = self._entries[canon]
        if isinstance(entry, _Lazy):
            origin = self._origin.get(canon) or entry.target
            try:
                entry = load_target(entry.target)
            except Exception as exc:  # a broken third-party package: name it (a bundled one raises as is)
                if not self._origin.get(canon):
                    raise
                raise RegistryError(f"{origin} failed to load: {type(exc).__name__}: {exc}") from None
            if self._validate is not None:
                entry = self._validate(origin, entry)
            self._entries[canon] = entry
        return entry

    def arg_type(self, fixed: Iterable[str] = ()) -> Callable[[str], str]:
        """An ``argparse`` ``type=``: a value's canonical name (a name or an alias, any case,
        ``_`` read as ``-``), or one of the ``fixed`` values that are no entry of this registry
        (``auto``); anything else is refused naming the choices."""
        keep = tuple(fixed)
        own = {name_key(f): f for f in keep}

        def canonical(text: str) -> str:
            if name_key(text) in own:
                return own[name_key(text)]
            try:
                return self.canonical(text)
            except RegistryError:
                import argparse

                raise argparse.ArgumentTypeError(f"{text!r} is not one of {self.metavar(keep)}") from None

        canonical.__name__ = self.kind  # argparse's "invalid <name> value" names the family
        return canonical

    def metavar(self, fixed: Iterable[str] = ()) -> str:
        """``{a,b (alias b2/b3),...}``: the choices a user can type, as a ``metavar``. No ", "
        inside: pytest's help formatter splits an option's invocation there (``pytest --help``
        failed on ``inspect (alias inspect-ai, inspect_ai)``)."""
        shown = [
            *fixed,
            *(n + (f" (alias {'/'.join(self._aliases[n])})" if self._aliases.get(n) else "") for n in self.names()),
        ]
        return "{" + ",".join(shown) + "}"

    def names(self) -> tuple[str, ...]:
        self._load()
        return tuple(self._entries)

    def aliases(self, name: str) -> tuple[str, ...]:
        return self._aliases[self.canonical(name)]

    def origin(self, name: str) -> str:
        return self._origin[self.canonical(name)]

    def __getitem__(self, name: str) -> T:
        return self.get(name)

    def __contains__(self, name: object) -> bool:
        self._load()
        return isinstance(name, str) and name_key(name) in self._keys

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {list(self.names()) if self._ready else '...'})"


__all__ = ["Registry", "RegistryError", "UnknownNameError", "load_target", "name_key"]
