"""`leaderboard-audit collect SPEC.toml` and `leaderboard-audit models ...`."""
from __future__ import annotations

import argparse
import sys
from typing import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="leaderboard-audit collect",
                                 description="Run models on benchmarks under the harness grid and "
                                             "write records-v1 (resumable; see docs/collect.md).")
    ap.add_argument("spec", help="collection spec (TOML)")
    ap.add_argument("--output", help="override the spec's output directory")
    ap.add_argument("--engine", choices=["vllm", "transformers", "fake"], help="override the engine")
    ap.add_argument("--n-items", type=int, help="override items per benchmark")
    ap.add_argument("--quiet", action="store_true", help="no progress lines")
    ap.add_argument("--no-validate", action="store_true", help="skip load_records() at the end")
    ap.add_argument("--only-model", action="append", metavar="NAME",
                    help="collect only this model of the spec (repeatable; the CI gate, docs/ci-gate.md)")
    a = ap.parse_args(list(sys.argv[1:] if argv is None else argv))
    from ..records import RecordsError
    from .errors import CollectError
    try:
        return _run(a)
    except (CollectError, RecordsError) as exc:
        print(f"leaderboard-audit collect: {exc}", file=sys.stderr)
        return 4
    except OSError as exc:   # disk full, permissions changed mid-run: name the file, no traceback
        print(f"leaderboard-audit collect: {exc.filename or a.spec}: {exc.strerror or exc}", file=sys.stderr)
        return 4


def _run(a: argparse.Namespace) -> int:
    from pathlib import Path

    from .spec import load_spec
    spec = load_spec(a.spec)
    if a.output:
        spec.output = Path(a.output).resolve()
    if a.engine:
        spec.engine = a.engine
    if a.n_items is not None:
        spec.n_items = a.n_items
    from .run import collect
    root = collect(spec, progress=not a.quiet, only_models=a.only_model)
    if not a.no_validate:
        from ..records import load_records
        rec = load_records(root)
        print(f"records: {root} ({len(rec.models)} models x {len(rec.items)} items x "
              f"{len(rec.grid)} configs)")
        from .summary import classes_line
        for line in classes_line(root):
            print(line)
    else:
        print(f"records: {root}")
    return 0


def models_main(argv: Sequence[str] | None = None) -> int:
    from .models import models_main as _mm
    return _mm(list(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
