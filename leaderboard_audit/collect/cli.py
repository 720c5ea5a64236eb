"""`leaderboard-audit collect SPEC.toml` and `leaderboard-audit models ...`."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="leaderboard-audit collect",
        description="Run models on benchmarks under the harness grid and "
        "write records-v1 (resumable; see docs/collect.md).",
    )
    ap.add_argument("spec", nargs="?", help="collection spec (TOML); not with --replay")
    ap.add_argument("--output", help="override the spec's output directory")
    from .engines import ENGINES

    ap.add_argument("--engine", type=ENGINES.arg_type(), metavar=ENGINES.metavar(), help="override the engine")
    ap.add_argument("--n-items", type=int, help="override items per benchmark")
    ap.add_argument(
        "--benchmarks-dir",
        metavar="DIR",
        help="override the spec's benchmarks_dir: the folder of the benchmarks' Parquet files in hub schema "
        "(a spec written elsewhere, e.g. fixtures/real/spec.toml, points at ../shared)",
    )
    ap.add_argument("--quiet", action="store_true", help="no progress lines")
    ap.add_argument(
        "--verbose",
        action="store_true",
        help="let vLLM, torch, transformers and datasets print their own logs and progress bars "
        "(quiet by default: only their errors)",
    )
    ap.add_argument("--no-validate", action="store_true", help="skip load_records() at the end")
    ap.add_argument(
        "--ray",
        nargs="?",
        const="local",
        metavar="ADDRESS",
        help="run engine actors on a Ray cluster (ADDRESS: auto, host:6379, ray://host:10001; "
        "none: a local cluster; put it after SPEC); needs the ray extra",
    )
    ap.add_argument("--ray-actors", type=int, help="at most this many engine actors per model")
    ap.add_argument("--ray-cpus-per-actor", type=int, default=1, help="CPUs per actor where there are no GPUs")
    ap.add_argument(
        "--dry-run",
        action="store_true",
        help="print the work (prompts, tokens per model) and a time estimate; run nothing",
    )
    ap.add_argument(
        "--accelerator", default=None, help="for --dry-run: H200, H100, A100, A40, L4, CPU (default: all of them)"
    )
    ap.add_argument("--peak-tflops", type=float, help="for --dry-run: your accelerator's peak bf16 TFLOP/s")
    ap.add_argument(
        "--tokenizer-proxy",
        action="append",
        help="for --dry-run: count tokens with this tokenizer where a model's own does not load "
        "(PATH, or NAME_PART=PATH for models whose name contains NAME_PART; repeatable)",
    )
    ap.add_argument(
        "--only-model",
        action="append",
        metavar="NAME",
        help="collect only this model of the spec (repeatable; the CI gate, docs/ci-gate.md)",
    )
    ap.add_argument(
        "--replay",
        metavar="DIR",
        help="answer from the complete records set DIR instead of an engine: a budgeted collection "
        "(needs --output, and --budget or --until-decided --max-budget; no SPEC; docs/collect.md, "
        "'Budgeted collection and replay')",
    )
    ap.add_argument(
        "--budget",
        type=float,
        metavar="FRACTION",
        help="a budgeted collection: evaluate this share of the grid's cells, chosen round by round "
        "(with SPEC or --replay; docs/collect.md, 'Budgeted collection')",
    )
    ap.add_argument(
        "--until-decided",
        action="store_true",
        help="a budgeted collection that stops once every (model, item)'s robust status is known; needs --max-budget "
        "(with SPEC or --replay)",
    )
    ap.add_argument("--max-budget", type=float, metavar="FRACTION", help="the cap of --until-decided (share of cells)")
    ap.add_argument(
        "--seed", type=int, help="a budgeted collection's design seed (default 0, or the spec's budget_seed)"
    )
    a = ap.parse_args(list(sys.argv[1:] if argv is None else argv))
    if (a.replay is None) == (a.spec is None):
        ap.error("give a SPEC, or --replay DIR (not both)")
    from ..records import RecordsError
    from .engines.openai_engine import APIError
    from .errors import CollectError

    try:
        if a.replay is not None:
            if a.until_decided or a.max_budget is not None:
                return _replay_until_decided(a)
            from .replay import replay_main

            return replay_main(a.replay, a.output, a.budget, a.seed or 0, quiet=a.quiet)
        return _run(a)
    except (CollectError, RecordsError) as exc:
        print(f"leaderboard-audit collect: {exc}", file=sys.stderr)
        return 4
    except APIError as exc:  # the API server failed for good: finished chunks are kept, a rerun resumes
        print(
            f"leaderboard-audit collect: {a.spec or a.replay}: {exc} (finished chunks are kept: rerun to resume)",
            file=sys.stderr,
        )
        return 4
    except OSError as exc:  # disk full, permissions changed mid-run: name the file, no traceback
        print(
            f"leaderboard-audit collect: {exc.filename or a.spec or a.replay}: {exc.strerror or exc}", file=sys.stderr
        )
        return 4


def _replay_until_decided(a: argparse.Namespace) -> int:
    """``--replay DIR --until-decided --max-budget F``: the flags checked by the spec's own rule
    (``Spec.check_budget``: the same errors as with a SPEC), then the replay (collect/replay.py)."""
    from pathlib import Path

    from .errors import CollectError
    from .replay import until_decided_main
    from .spec import Spec

    try:
        Spec([], Path("."), budget=a.budget, until_decided=a.until_decided, max_budget=a.max_budget).check_budget()
    except ValueError as exc:
        raise CollectError(a.replay, str(exc), fix="see docs/collect.md, 'Budgeted collection and replay'") from None
    assert a.max_budget is not None  # check_budget: until_decided needs its cap
    return until_decided_main(a.replay, a.output, a.max_budget, a.seed or 0, quiet=a.quiet)


def _run(a: argparse.Namespace) -> int:
    from .errors import CollectError
    from pathlib import Path

    from .spec import load_spec

    spec = load_spec(a.spec)
    if a.output:
        spec.output = Path(a.output).resolve()
    if a.engine:
        spec.engine = a.engine
    if a.n_items is not None:
        spec.n_items = a.n_items
    if a.benchmarks_dir:
        where = Path(a.benchmarks_dir).resolve()
        if not where.is_dir():
            raise CollectError(
                a.benchmarks_dir,
                "--benchmarks-dir: not a folder",
                fix="give the folder that holds the benchmarks' Parquet files (docs/collect.md, 'Benchmarks')",
            )
        spec.benchmarks_dir = where
    if a.budget is not None or a.until_decided or a.max_budget is not None:
        spec.budget, spec.until_decided, spec.max_budget = a.budget, a.until_decided, a.max_budget
    if a.seed is not None:
        spec.budget_seed = a.seed
    try:
        spec.check_budget()
    except ValueError as exc:
        raise CollectError(a.spec, str(exc), fix="see docs/collect.md, 'Budgeted collection'") from None
    if a.dry_run:
        from .dryrun import dry_run_main

        if spec.judge is not None:
            print("[collect] --dry-run: the [judge] stage is not estimated (docs/collect.md)", file=sys.stderr)

        return dry_run_main(
            spec, accelerator=a.accelerator, peak_tflops=a.peak_tflops, tokenizer_proxy=a.tokenizer_proxy
        )
    if spec.judge is not None and a.only_model:
        raise CollectError(
            a.spec,
            "--only-model with a [judge] table: the judge stage judges every model of the spec",
            fix="collect the new model without --only-model (finished answer and judgment files are kept)",
        )
    if not spec.benchmarks and spec.judge is not None:  # benchmarks = []: the judge stage alone
        return _judge(spec, a)
    if a.ray is not None:
        if a.only_model:
            raise CollectError(
                "--only-model with --ray: not supported; collect the new model without --ray "
                "or give the Ray run a spec that names only it"
            )
        from .distributed import collect_ray

        root = collect_ray(
            spec,
            address=None if a.ray == "local" else a.ray,
            progress=not a.quiet,
            max_actors=a.ray_actors,
            cpus_per_actor=a.ray_cpus_per_actor,
            verbose=a.verbose,
        )
    else:
        from .run import collect

        root = collect(spec, progress=not a.quiet, only_models=a.only_model, verbose=a.verbose)
    if not a.no_validate:
        from ..records import load_records

        rec = load_records(root)
        print(f"records: {root} ({len(rec.models)} models x {len(rec.items)} items x {len(rec.grid)} configs)")
        from .summary import classes_line

        for line in classes_line(root):
            print(line)
    else:
        print(f"records: {root}")
    return _judge(spec, a) if spec.judge is not None else 0


def _judge(spec: object, a: argparse.Namespace) -> int:
    """The spec's judge stage (docs/collect.md, "Judge stage"), after its benchmarks."""
    from .judge import run_judge, summary_lines

    out = run_judge(spec, progress=not a.quiet, verbose=a.verbose)
    from ..records import load_records

    rec = load_records(out)
    print(f"judged records: {out} ({len(rec.models)} models x {len(rec.items)} items x {len(rec.grid)} configs)")
    for line in summary_lines(out.parent):
        print(line)
    return 0


def models_main(argv: Sequence[str] | None = None) -> int:
    from .models import models_main as _mm

    return _mm(list(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
