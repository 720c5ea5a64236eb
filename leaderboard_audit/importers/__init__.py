"""Importers: existing evaluation runs -> records-v1 (issue 6, docs/importers.md).

One module per format, each declaring itself with a module-level ``FORMAT_INFO`` and
defining its loader; the registry of formats is ``leaderboard_audit.formats.IMPORTERS``
(docs/importers.md, "Adding an importer": one file plus its tests).

``load(src, fmt, **opts)`` returns :class:`~leaderboard_audit.records.Records`;
``leaderboard-audit import FORMAT SRC -o DIR`` writes them (importers.cli).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ..formats import IMPORTERS, MAPPING_FILE, ImporterSpec


def load(src: str | os.PathLike[str], fmt: str, **opts: Any):
    """Import ``src`` in format ``fmt`` (an importer's name or alias) as Records.

    The options an importer takes are its ``FORMAT_INFO["options"]`` (``leaderboard-audit
    import -h`` lists them); a set option it does not take is a ``ValueError``. Without
    ``mapping``, a ``SRC/audit_mapping.json`` is used when present (so ``pytest --audit SRC
    --audit-format FORMAT`` needs no further option).
    """
    try:
        spec = IMPORTERS[fmt]
    except KeyError:
        raise ValueError(f"unknown import format {fmt!r}; expected one of {IMPORTERS.names()}") from None
    if "mapping" in spec.options and opts.get("mapping") is None:
        found = Path(src) / MAPPING_FILE
        if found.is_file():
            opts["mapping"] = str(found)
    return spec.load(src, **opts)


__all__ = ["IMPORTERS", "MAPPING_FILE", "ImporterSpec", "load"]
