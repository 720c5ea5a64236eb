"""Declared aliases are accepted by every front end (architecture review A7): the argparse
``type=`` is the registry's canonical lookup, and the refusal names every choice."""

from __future__ import annotations

import argparse

import pytest

from helpers.paths import REPO
from leaderboard_audit.formats import IMPORTERS, audit_format_arg


def test_the_lookup_gives_the_canonical_name_of_an_alias_in_any_case():
    kind = audit_format_arg()
    assert kind("light-eval") == kind("LightEval") == kind("lighteval") == "lighteval"
    assert kind("INSPECT_AI") == kind("inspect-ai") == IMPORTERS.canonical("inspect-ai")
    assert kind("auto") == "auto" and kind("table") == "table"
    with pytest.raises(argparse.ArgumentTypeError, match=r"'nope' is not one of \{auto,records,table,.*light-eval"):
        kind("nope")


def _parse(parser: argparse.ArgumentParser, *argv: str) -> argparse.Namespace:
    return parser.parse_args(list(argv))


def test_every_cli_accepts_an_alias_and_names_the_choices_on_a_typo(capsys):
    from leaderboard_audit.cli.audit import build_parser as audit_parser
    from leaderboard_audit.cli.pack import build_parser as pack_parser
    from leaderboard_audit.importers.cli import parser as import_parser

    assert _parse(audit_parser(), "x", "--format", "light-eval").format == "lighteval"
    assert _parse(pack_parser(), "x", "-o", "y.arrow", "--format", "LIGHT_EVAL").format == "lighteval"
    assert _parse(import_parser(), "inspect-ai", "src", "-o", "out").format == IMPORTERS.canonical("inspect-ai")
    with pytest.raises(SystemExit):
        _parse(audit_parser(), "x", "--format", "lmevl")
    assert "'lmevl' is not one of {auto,records,table," in capsys.readouterr().err


def test_collect_accepts_the_engine_alias(capsys):
    from leaderboard_audit.collect.cli import main as collect_main
    from leaderboard_audit.collect.engines import ENGINES

    kind = ENGINES.arg_type()
    assert kind("hf") == kind("HF") == "transformers"
    with pytest.raises(argparse.ArgumentTypeError, match="is not one of"):
        kind("vlm")
    # the collect command itself: the alias parses (it stops later, at the missing spec)
    with pytest.raises(SystemExit):
        collect_main(["--engine", "HF"])
    err = capsys.readouterr().err
    assert "give a SPEC" in err and "--engine" not in err.split("error:", 1)[1]
    with pytest.raises(SystemExit):
        collect_main(["--engine", "vlm"])
    assert "argument --engine: 'vlm' is not one of {vllm,transformers (alias hf)," in capsys.readouterr().err


@pytest.mark.slow
def test_pytest_accepts_an_audit_format_alias(pytester):
    r = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--co", "-q", f"--audit={REPO / 'fixtures' / 'tiny'}", "--audit-format", "Records"
    )
    assert r.ret == 0, r.stderr.str()[-2000:]
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--co", "-q", "--audit=x", "--audit-format", "lmevl")
    assert r.ret == pytest.ExitCode.USAGE_ERROR and "is not one of {auto,records,table," in r.stderr.str()


def test_pytest_help_lists_the_aliases(pytester):
    """``pytest --help`` formats ``--audit-format``'s metavar (it crashed on an alias list with
    ", " in it: pytest splits an option's invocation there)."""
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--help")
    assert r.ret == 0, r.stderr.str()[-2000:]
    out = r.stdout.str()
    assert "--audit-format=" in out and "lighteval (alias light-eval)" in out and "inspect-ai/inspect_ai" in out
