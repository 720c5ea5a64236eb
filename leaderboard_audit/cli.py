"""`leaderboard-audit` command line: audit, collect, import, convert models.

Each subcommand's code lives with its layer; this module only dispatches.
"""

from __future__ import annotations

import importlib
import sys

SUBCOMMANDS = {
    "audit": ("leaderboard_audit.report_cli", "main", "audit records and print/write the report"),
    "collect": ("leaderboard_audit.collect.cli", "main", "run models on benchmarks under the grid -> records"),
    "models": (
        "leaderboard_audit.collect.cli",
        "models_main",
        "turn GGUF files shipped in PyPI packages into HF folders",
    ),
    "import": ("leaderboard_audit.importers.cli", "main", "import lm-eval, HELM or Inspect AI runs as records"),
    "pack": ("leaderboard_audit.pack_cli", "main", "write records in the packed form (fast to load)"),
    "cache": ("leaderboard_audit.pack_cli", "cache_main", "show or clear the records load cache"),
}


def usage() -> str:
    lines = ["usage: leaderboard-audit COMMAND [ARGS]", "", "commands:"]
    lines += [f"  {name:<8} {help_}" for name, (_, _, help_) in SUBCOMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name not in SUBCOMMANDS:
        print(f"leaderboard-audit: unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    mod, fn, _ = SUBCOMMANDS[name]
    return int(getattr(importlib.import_module(mod), fn)(rest) or 0)


if __name__ == "__main__":
    sys.exit(main())
