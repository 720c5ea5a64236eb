"""Counted nouns and name lists for the renderers: ``records.words`` (the lowest layer holds them,
so the importers and the collector count nouns without importing the renderers)."""

from __future__ import annotations

from ..records.words import IRREGULAR, count, names_list, plural  # noqa: F401 - re-exported

__all__ = ["IRREGULAR", "count", "names_list", "plural"]
