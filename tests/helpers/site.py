"""A third-party package made on disk: one module and the dist-info that declares its entry
point, found by ``importlib.metadata`` once its folder is on ``PYTHONPATH``."""

from __future__ import annotations

from pathlib import Path


def third_party_package(site: Path, module: str, source: str, group: str, entry: str) -> Path:
    """``site``/``module``.py holding ``source``, and a dist-info declaring ``entry``
    (``name = target``) under the entry point ``group``; returns ``site`` (put it on
    ``PYTHONPATH``)."""
    site.mkdir(parents=True, exist_ok=True)
    (site / f"{module}.py").write_text(source)
    dist = site / f"{module}-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module.replace('_', '-')}\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text(f"[{group}]\n{entry}\n")
    return site
