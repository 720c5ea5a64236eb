"""README's "Audit a leaderboard" commands name only inputs a clone has, or that an earlier
command of the section writes (UX review 2026-12-04 #27: `pytest --audit big.packed` named a
file nothing had made)."""

from __future__ import annotations

import re
import shlex

from helpers.paths import REPO

OUTPUT_FLAGS = ("-o", "--output", "--copy")


def section_commands() -> list[list[str]]:
    text = (REPO / "README.md").read_text()
    section = text[text.index("## Audit a leaderboard") : text.index("### The checks")]
    blocks = re.findall(r"```bash\n(.*?)```", section, re.S)
    lines = [line.split("#", 1)[0].strip() for b in blocks for line in b.splitlines()]
    return [shlex.split(line) for line in lines if line.startswith(".venv/bin/")]


def test_every_audited_path_exists_or_is_written_first():
    made: set[str] = set()
    commands = section_commands()
    assert len(commands) >= 8
    for argv in commands:
        inputs = []
        for i, arg in enumerate(argv):
            if arg == "--audit":
                inputs.append(argv[i + 1])
            elif arg.startswith("--audit="):
                inputs.append(arg.split("=", 1)[1])
        tool = argv[0].rsplit("/", 1)[-1]
        if tool == "leaderboard-audit" and len(argv) > 2 and argv[1] in ("audit", "pack"):
            inputs.append(argv[2])
        for path in inputs:
            assert (REPO / path).exists() or path in made, (
                f"{' '.join(argv)}: {path} is neither in a clone nor written above"
            )
        made |= {argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg in OUTPUT_FLAGS}
