"""What ships beside the code: the demo records (the first lesson) and the docs.

In a wheel they are package data (``leaderboard_audit/demo``, ``leaderboard_audit/docs``;
pyproject's ``package-dir``); in a source tree they are ``fixtures/demo`` and ``docs/``.
``leaderboard-audit demo`` audits the demo, ``leaderboard-audit demo --copy DIR`` writes its
records to a folder (for ``pytest --audit DIR``), and ``leaderboard-audit docs NAME`` prints
``docs/NAME.md``, so every ``docs/NAME.md`` the outputs name can be read from a wheel too.

Import-light: the standard library only (the audit is imported when it runs).
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent  # the leaderboard_audit package (this file is in its cli/)


class BundledError(LookupError):
    """A bundled file that this installation lacks (the message says what to do)."""


def _first_existing(*candidates: Path, what: str) -> Path:
    for path in candidates:
        if path.is_dir():
            return path
    raise BundledError(
        f"{what}: not found in this installation (looked in {', '.join(str(p) for p in candidates)}); "
        "fix: reinstall leaderboard-audit from a wheel or a source checkout"
    )


def demo_dir() -> Path:
    """The demo records: six simulated models, four benchmarks, 26 configurations."""
    return _first_existing(PACKAGE / "demo", PACKAGE.parent / "fixtures" / "demo", what="the demo records")


def docs_dir() -> Path:
    """The folder holding ``audits.md``, ``records.md``, … and ``spec/``."""
    return _first_existing(PACKAGE / "docs", PACKAGE.parent / "docs", what="the docs")


def doc_names() -> list[str]:
    """Every bundled doc by the name ``leaderboard-audit docs NAME`` takes (``records``, ``spec/AUDITS``)."""
    root = docs_dir()
    return sorted(p.relative_to(root).with_suffix("").as_posix() for p in root.rglob("*.md"))


def doc_path(name: str) -> Path:
    """``records``, ``records.md``, ``docs/records.md`` or ``spec/audits`` -> the file."""
    key = name.strip().removeprefix("docs/").removesuffix(".md").lower()
    for known in doc_names():
        if known.lower() == key:
            return docs_dir() / f"{known}.md"
    raise BundledError(f"no doc named {name!r}; the docs: {', '.join(doc_names())}")


def _title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            return line.lstrip("#").strip()
    return ""


def docs_main(argv: list[str] | None = None) -> int:
    """``leaderboard-audit docs [NAME]``: list the docs, or print one."""
    p = argparse.ArgumentParser(
        prog="leaderboard-audit docs",
        description="Print docs/NAME.md (bundled with the package, so it works outside the source tree); "
        "without NAME, list the docs.",
    )
    p.add_argument("name", nargs="?", help="a doc's name: records, audits, spec/AUDITS, … (docs/records.md works too)")
    p.add_argument("--path", action="store_true", help="print the file's path instead of its text")
    try:
        args = p.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    try:
        if args.name is None:
            width = max(len(n) for n in doc_names())
            for n in doc_names():
                print(f"{n:<{width}}  {_title(docs_dir() / f'{n}.md')}")
            print("\nleaderboard-audit docs NAME prints one; --path gives its file")
            return 0
        path = doc_path(args.name)
    except BundledError as exc:
        print(f"leaderboard-audit docs: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(f"{path}\n" if args.path else path.read_text(encoding="utf-8"))
    return 0


def copy_demo(dest: Path) -> Path:
    """Write the demo's records to ``dest`` (a new or empty folder); atomic: a temporary
    sibling folder renamed into place, so a failed copy leaves nothing behind."""
    dest = Path(dest)
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise BundledError(f"{dest}: exists and is not an empty folder; fix: name a new folder")
    src = demo_dir()
    tmp = dest.with_name(f".{dest.name}.tmp-demo")
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(src, tmp, ignore=shutil.ignore_patterns("__pycache__", "*.py", "*.pyc"))
    if dest.exists():
        dest.rmdir()
    tmp.rename(dest)
    return dest


def demo_main(argv: list[str] | None = None) -> int:
    """``leaderboard-audit demo [--copy DIR] [audit options]``: the first lesson."""
    argv = list(sys.argv[1:] if argv is None else argv)
    p = argparse.ArgumentParser(
        prog="leaderboard-audit demo",
        description="Audit the bundled demo leaderboard (six simulated models with planted truths; "
        "it fails on purpose). Every option of `leaderboard-audit audit` applies "
        "(--markdown, --html, --leaderboard, ...).",
        epilog="The same audit as pytest tests: leaderboard-audit demo --copy demo && pytest --audit=demo --tb=no -q",
    )
    p.add_argument("--copy", metavar="DIR", help="write the demo's records to DIR instead (then: pytest --audit DIR)")
    args, rest = p.parse_known_args(argv)
    if args.copy is not None:
        if rest:
            print(f"leaderboard-audit demo: --copy takes no other option (got {' '.join(rest)})", file=sys.stderr)
            return 2
        try:
            dest = copy_demo(Path(args.copy))
        except (BundledError, OSError) as exc:
            print(f"leaderboard-audit demo: {exc}", file=sys.stderr)
            return 2
        print(f"wrote the demo's records to {dest}; audit them: pytest --audit={dest} --tb=no -q")
        return 0
    try:
        path = demo_dir()
    except BundledError as exc:
        print(f"leaderboard-audit demo: {exc}", file=sys.stderr)
        return 4
    from .audit import main as audit_main

    return audit_main([str(path), *rest])
