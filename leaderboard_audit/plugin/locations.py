"""Each parametrized audit test's ``location`` shared from the first of its function's."""

from __future__ import annotations

import pytest


def share_locations(items: list[pytest.Item]) -> None:
    """Give each parametrized audit test its ``location`` from the first of its function's.

    pytest derives every item's ``(file, line, name)`` anew (``Item.location``: the function's
    source file and line looked up, the path resolved and made relative, ~0.1 ms a test), where
    the cases of one function differ only in their names. It relies on ``Item.location`` being a
    ``functools.cached_property`` (pytest has no public way to give an item its location; no
    pytest issue asks for one); any other kind of ``location`` is left alone. An item that is not a plain
    ``pytest.Function`` (its ``reportinfo`` or ``location`` overridden) keeps pytest's own."""
    first: dict[tuple[int, int], tuple[str, int | None, str]] = {}  # (file, line, name's prefix)
    for item in items:
        if type(item).reportinfo is not pytest.Function.reportinfo or "location" in item.__dict__:
            continue
        if type(item).location is not pytest.Function.location:  # type: ignore[comparison-overlap]
            continue
        key = (id(item.parent), id(getattr(item, "obj", None)))
        known = first.get(key)
        if known is None:
            path, line, domain = item.location
            if domain.endswith(item.name):
                first[key] = (path, line, domain[: len(domain) - len(item.name)])
            continue
        path, line, prefix = known
        item.__dict__["location"] = (path, line, prefix + item.name)


__all__ = ["share_locations"]
