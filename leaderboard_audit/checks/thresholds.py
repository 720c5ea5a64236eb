"""Every check's thresholds, with the defaults the checks declare (``Check.thresholds``),
overridable by name. Here, above the checks, rather than in ``verdicts`` (below them):
the defaults come from the check registry, and ``verdicts`` imports no check."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from .verdicts import convert_threshold


class Thresholds(Mapping[str, Any]):
    """Every check's thresholds (defaults from the registry), overridable by name.

    Read as attributes (``t.band_pass``) or as a mapping. Unknown names, non-numbers,
    NaN/inf and non-positive or fractional integer thresholds are ``ValueError``s that
    name the threshold."""

    def __init__(self, values: Mapping[str, Any] | None = None):
        from . import default_thresholds

        defaults = default_thresholds()
        given = dict(values or {})
        unknown = sorted(set(given) - set(defaults))
        if unknown:
            raise ValueError(f"unknown audit threshold(s) {unknown}; known: {sorted(defaults)}")
        merged = {}
        for name, default in defaults.items():
            merged[name] = convert_threshold(name, given[name], default) if name in given else default
        object.__setattr__(self, "_values", merged)

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any]) -> Thresholds:
        return cls(values)

    @classmethod
    def names(cls) -> list[str]:
        from . import default_thresholds

        return sorted(default_thresholds())

    def __getattr__(self, name: str) -> Any:
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("Thresholds are read-only")

    def __getitem__(self, name: str) -> Any:
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._values))

    def __len__(self) -> int:
        return len(self._values)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Thresholds) and self._values == other._values

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._values.items())))

    def as_dict(self) -> dict[str, Any]:
        return {k: self._values[k] for k in sorted(self._values)}

    def __repr__(self) -> str:
        return f"Thresholds({self.as_dict()})"
