"""The report outputs, each declared at its render function (``@output``; ``OUTPUTS``: the
plugin's options, the CLI's flags and the writers all read it); their paths, checked before
the audit runs (a bad path fails in a second, not after the whole audit); the line saying
where each report was written."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Output:
    """One report output: ``render(report, path) -> text``, the settings key and pytest option
    that ask for it, the CLI's flag, the suffixes its file may have (None: any) and the help
    line. Declared at its render function with ``@output(...)``."""

    key: str
    option: str
    flag: str
    render: Callable[[dict[str, Any], str], str]
    metavar: str
    help: str
    suffixes: tuple[str, ...] | None = None


_DECLARED: list[Output] = []


def output(
    key: str, option: str, flag: str, metavar: str, help: str, suffixes: tuple[str, ...] | None = None
) -> Callable[[Callable[[dict[str, Any], str], str]], Callable[[dict[str, Any], str], str]]:
    """Declare a report output at its render function (lm-evaluation-harness's registry style):
    the plugin's option, the CLI's flag and the writers all read ``OUTPUTS``, in declaration
    order. A render function imports its renderer when called, so ``pytest --help`` imports none."""

    def declare(render: Callable[[dict[str, Any], str], str]) -> Callable[[dict[str, Any], str], str]:
        if any(o.key == key or o.option == option or o.flag == flag for o in _DECLARED):
            raise ValueError(f"report output {key!r} ({option}, {flag}) is declared twice")
        _DECLARED.append(Output(key, option, flag, render, metavar, help, suffixes))
        return render

    return declare


@output("report", "--audit-report", "--json", "PATH.json", "write the report-v1 JSON here")
def render_json(report: dict[str, Any], path: str) -> str:
    from ..engine.run import dumps_report

    return dumps_report(report)


@output(
    "markdown",
    "--audit-markdown",
    "--markdown",
    "PATH.md",
    "write a Markdown report here (with --audit-submission: the gate's PR comment)",
)
def render_md(report: dict[str, Any], path: str) -> str:
    """The Markdown report; with the submission gate, the gate's PR comment alone."""
    from .markdown import gate_markdown, render_markdown

    return gate_markdown(report) if "submission_audit" in report else render_markdown(report)


@output("html", "--audit-html", "--html", "PATH.html", "write a self-contained HTML report here")
def render_page(report: dict[str, Any], path: str) -> str:
    from .html import render_html

    return render_html(report)


@output(
    "leaderboard",
    "--audit-leaderboard",
    "--leaderboard",
    "PATH",
    "write a publishable leaderboard (ranked by the harness-averaged score with simultaneous 95%% rank "
    "intervals; score with 95%% CI, reference, band, robust accuracy, models below, configs won, harness "
    "card); .md, .csv or .html by suffix",
    (".md", ".csv", ".html"),
)
def render_board(report: dict[str, Any], path: str) -> str:
    from .leaderboard import render_leaderboard

    return render_leaderboard(report, path)


#: every report output, in declaration order (the options', the flags' and the writers' order)
OUTPUTS: tuple[Output, ...] = tuple(_DECLARED)
#: option -> the suffixes its file may have (None: any)
SUFFIXES: dict[str, tuple[str, ...] | None] = {o.option: o.suffixes for o in OUTPUTS}


def render_outputs(
    report: dict[str, Any], paths: Mapping[str, Any], *, flags: bool = False
) -> list[tuple[str, str, Callable[[], str]]]:
    """(option or, with ``flags``, the CLI's flag; path; what renders it) for every output
    ``paths`` (settings key -> path) asks for, in ``OUTPUTS`` order."""
    out = []
    for o in OUTPUTS:
        path = paths.get(o.key)
        if path:
            out.append((o.flag if flags else o.option, path, lambda o=o, path=path: o.render(report, path)))
    return out


def output_problem(opt: str, path: str | os.PathLike[str], suffixes: tuple[str, ...] | None = None) -> str | None:
    """Why ``path`` cannot take a report (one line naming the option), or None.

    Tries to create (and at once removes) a temporary file in the target folder, so a
    read-only folder or a pseudo-filesystem such as /proc is refused up front."""
    p = Path(path)
    if not str(path).strip():
        return f"{opt}: empty path"
    if suffixes is not None and p.suffix.lower() not in suffixes:
        return f"{opt} {path}: the file must end in {', '.join(suffixes)} (the suffix picks the format)"
    if p.is_dir():
        return f"{opt} {path}: is a folder; give a file name"
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        return f"{opt} {path}: the folder {parent} does not exist"
    try:
        with tempfile.NamedTemporaryFile(dir=parent, prefix=".la-check-", delete=True):
            pass
    except OSError as exc:
        return f"{opt} {path}: cannot write in {parent} ({exc.strerror or exc})"
    return None


def written_line(opt: str, path: str, n_bytes: int) -> str:
    return f"{opt}: wrote {path} ({n_bytes:,} bytes)"


__all__ = ["OUTPUTS", "SUFFIXES", "Output", "output", "output_problem", "render_outputs", "written_line"]
