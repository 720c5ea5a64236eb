"""The collection spec (TOML): models, benchmarks, grid, engine, output.

```toml
output = "records"                 # records directory (relative to this file)
engine = "vllm"                    # "vllm" (default) | "transformers" | "openai" | "fake"
grid = "paper"                     # "paper" or a TOML/JSON grid file
n_items = 100                      # per benchmark (paper: 1000)
benchmarks = ["arc", "hellaswag", "mmlu", "truthfulqa"]
benchmarks_dir = "../shared/benchmarks"   # optional: local Parquet files in hub schema
chunk_items = 50                   # items per batched engine call / checkpoint
# budget = 0.3                     # optional: a budgeted collection, this share of the grid's cells
# until_decided = true; max_budget = 0.5   # or: until every robust status is known, at most 0.5
# budget_seed = 0                  # the budgeted design's seed

[benchmark_files]                  # optional, per benchmark, overrides benchmarks_dir
arc = "path/to/ARC-Challenge-test.parquet"

[engine_options]                   # passed to the engine (vLLM: tensor_parallel_size, ...)
tensor_parallel_size = 1

[[models]]
name = "SmolLM2-135M-Instruct"     # display name in the records
path = "gguf:smollm2-135m-instruct"  # HF folder, hub id, or gguf:<name> (leaderboard-audit models)
dtype = "auto"                     # auto: bfloat16 on a GPU, float32 on CPU
chat_template = false

[judge]                            # optional: the judge stage (collect/judge.py, docs/collect.md)
prompts = ["arena-hard"]
[[judge.models]]
name = "SmolLM2-judge"
path = "gguf:smollm2-135m-instruct"
```
"""

from __future__ import annotations

import hashlib
import json
import re
import tomllib
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .axes import AxesSpec, axes_from_obj
from .benchmarks import SOURCES
from .engines import DEFAULT_ENGINE
from .model_spec import ModelSpec, models_from_list


@dataclass
class Spec:
    models: list[ModelSpec]
    output: Path
    benchmarks: list[str] = field(default_factory=lambda: list(SOURCES))
    n_items: int | None = 1000
    engine: str = DEFAULT_ENGINE
    grid: str = "paper"
    benchmarks_dir: Path | None = None
    benchmark_files: dict[str, str] = field(default_factory=dict)
    engine_options: dict[str, Any] = field(default_factory=dict)
    chunk_items: int = 50
    item_offset: int = 0  # skip this many selected items (CI subsets); ids unchanged
    raw_sidecar: bool = True
    benchmark_sources: dict[str, dict[str, Any]] = field(default_factory=dict)  # any benchmark: field mapping
    batch_items: int | None = None  # items per engine call (a multiple of chunk_items; default chunk_items)
    parse: str = "paper"  # "strict": enumerations (" A, B, C, D") score unparseable (collect/answers.py)
    axes: AxesSpec | None = None  # shots, cot, chat_template, system_prompt, design (collect/axes.py)
    budget: float | None = None  # a budgeted collection: this share of the grid's cells (collect/budgeted.py)
    until_decided: bool = False  # a budgeted collection until every robust status is known, within max_budget
    max_budget: float | None = None  # the cap of until_decided (a share of the grid's cells)
    budget_seed: int = 0  # the budgeted design's seed
    judge: Any = None  # the [judge] table: collect/judge.py's JudgeSpec

    @property
    def budgeted(self) -> bool:
        return self.budget is not None or self.until_decided

    def check_budget(self) -> None:
        """``budget`` alone, or ``until_decided`` with its ``max_budget`` cap (docs/collect.md)."""
        if self.budget is not None and self.until_decided:
            raise ValueError("give 'budget' (--budget) or 'until_decided' (--until-decided), not both")
        if self.until_decided and self.max_budget is None:
            raise ValueError("'until_decided' (--until-decided) needs its cap 'max_budget' (--max-budget FRACTION)")
        if self.max_budget is not None and not self.until_decided:
            raise ValueError(
                "'max_budget' (--max-budget) is the cap of 'until_decided'; for a fixed share use 'budget'"
            )
        for name in ("budget", "max_budget"):
            v = getattr(self, name)
            if v is not None and not 0 < v <= 1:
                raise ValueError(f"'{name}' must be a share of the grid's cells in (0, 1], got {v!r}")

    def files_for(self, bench: str) -> str | None:
        if bench in self.benchmark_files:
            return self.benchmark_files[bench]
        if self.benchmarks_dir is not None:
            from .benchmarks import local_file

            return str(local_file(bench, self.benchmarks_dir))
        return None

    def fingerprint(self, bench: str, model: ModelSpec, grid_json: bytes, item_ids: list[str]) -> str:
        """What a (benchmark, model) file's content depends on (not the output dir)."""
        h = hashlib.sha256()
        mdict = asdict(model)
        if not mdict["chat_template_kwargs"]:  # absent when unused: earlier outputs keep their fingerprints
            del mdict["chat_template_kwargs"]
        for part in (
            grid_json,
            json.dumps(mdict, sort_keys=True).encode(),
            self.engine.encode(),
            json.dumps(self.engine_options, sort_keys=True).encode(),
            str(self.chunk_items).encode(),
            "\n".join(item_ids).encode(),
        ):
            h.update(hashlib.sha256(part).digest())
        return h.hexdigest()


def spec_from_obj(obj: dict[str, Any], base: Path | None = None) -> Spec:
    base = base or Path.cwd()

    def rel(p: str | None) -> Path | None:
        if p is None:
            return None
        q = Path(p).expanduser()
        return q if q.is_absolute() else base / q

    known = {
        "models",
        "output",
        "benchmarks",
        "n_items",
        "engine",
        "grid",
        "benchmarks_dir",
        "benchmark_files",
        "engine_options",
        "chunk_items",
        "item_offset",
        "raw_sidecar",
    }
    known |= {"parse", "batch_items", "benchmark_sources"}
    known |= {"shots", "cot", "chat_template", "system_prompt", "design", "cot_max_tokens", "cot_instruction"}
    known |= {"budget", "until_decided", "max_budget", "budget_seed"}
    known |= {"judge"}  # the judge stage (collect/judge.py)
    unknown = set(obj) - known
    if unknown:
        raise ValueError(
            f"unknown spec key(s) {', '.join(repr(k) for k in sorted(unknown))}; known: {', '.join(sorted(known))}"
        )
    models = models_from_list(obj.get("models"), rel, what="model", empty="the spec names no [[models]]")
    benches = list(obj.get("benchmarks") or SOURCES)
    if "judge" in obj and obj.get("benchmarks") == []:  # the judge stage alone
        benches = []
    sources = _benchmark_sources(obj.get("benchmark_sources") or {}, rel)
    for b in benches:
        if b not in SOURCES and b not in sources:
            raise ValueError(
                f"unknown benchmark '{b}'; known: {', '.join(list(SOURCES) + list(sources))} "
                "(or describe it in [benchmark_sources.NAME])"
            )
    grid = str(obj.get("grid", "paper"))
    if grid not in ("paper", "paper-26"):
        grid = str(rel(grid))
    n = obj.get("n_items", 1000)
    axes = axes_from_obj(obj)
    if axes is not None and axes.chat_template is not None:
        own = [m.name for m in models if m.chat_template]
        if own:
            raise ValueError(
                f"'chat_template' is declared as an axis, so it applies to every model; drop "
                f"chat_template = true from [[models]] {', '.join(own)}"
            )
    output = rel(str(obj.get("output", "records")))
    judge = None
    if "judge" in obj:
        from .judge_spec import judge_from_obj

        judge = judge_from_obj(obj["judge"], rel, models, output)  # type: ignore[arg-type]
        if judge.benchmark not in SOURCES and judge.benchmark not in sources:
            raise ValueError(
                f"unknown benchmark '{judge.benchmark}' in [judge]; known: {', '.join(list(SOURCES) + list(sources))}"
            )
    spec = Spec(
        models=models,
        output=output,  # type: ignore[arg-type]
        benchmarks=benches,
        n_items=None if n in (None, 0, "all") else int(n),
        engine=str(obj.get("engine", DEFAULT_ENGINE)),
        grid=grid,
        benchmarks_dir=rel(obj.get("benchmarks_dir")),
        benchmark_files={k: str(rel(v)) for k, v in (obj.get("benchmark_files") or {}).items()},
        engine_options=dict(obj.get("engine_options") or {}),
        chunk_items=int(obj.get("chunk_items", 50)),
        item_offset=int(obj.get("item_offset", 0)),
        raw_sidecar=bool(obj.get("raw_sidecar", True)),
        parse=_parse_rule(obj.get("parse", "paper")),
        batch_items=int(obj["batch_items"]) if obj.get("batch_items") else None,
        benchmark_sources=sources,
        axes=axes,
        budget=_share(obj, "budget"),
        until_decided=bool(obj.get("until_decided", False)),
        max_budget=_share(obj, "max_budget"),
        budget_seed=int(obj.get("budget_seed", 0)),
        judge=judge,
    )
    spec.check_budget()
    return spec


def _share(obj: dict[str, Any], key: str) -> float | None:
    v = obj.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise ValueError(f"'{key}' must be a number in (0, 1] (a share of the grid's cells), got {v!r}")
    return float(v)


def _benchmark_sources(obj: Any, rel: Any) -> dict[str, dict[str, Any]]:
    from .benchmarks import check_mapping

    if not isinstance(obj, dict):
        raise ValueError("benchmark_sources must be a table of [benchmark_sources.NAME] tables")  # noqa: TRY004
    out = {}
    for name, mapping in obj.items():
        m = check_mapping(str(name), mapping)
        if "files" in m:
            fs = m["files"] if isinstance(m["files"], list) else [m["files"]]
            m["files"] = [str(rel(str(f))) for f in fs]
        out[str(name)] = m
    return out


def _parse_rule(value: Any) -> str:
    from .answers import PARSE_RULES

    if value not in PARSE_RULES:
        raise ValueError(f"parse = '{value}' is not a parse rule; known: {', '.join(PARSE_RULES)}")
    return str(value)


def load_spec(path: str | Path) -> Spec:
    """Read a spec file; any problem is one :class:`CollectError` naming file, line and fix."""
    from .errors import CollectError, line_of_key, line_of_value

    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CollectError(p, "no such collection spec", fix="pass the path of an existing TOML spec") from None
    except IsADirectoryError:
        raise CollectError(p, "is a directory, not a collection spec", fix="pass the TOML file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CollectError(p, f"cannot read the spec ({exc})") from None
    try:
        obj = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        raise CollectError(
            p, f"invalid TOML: {exc}", line=int(m.group(1)) if m else None, fix="correct the TOML syntax"
        ) from None
    try:
        return spec_from_obj(obj, p.parent.resolve())
    except CollectError as exc:
        raise CollectError(p, exc.message, line=exc.line or line_of_value(text, exc.where), fix=exc.fix) from None
    except (ValueError, TypeError, KeyError) as exc:
        msg = str(exc).strip("'\"")
        line = None
        for name in re.findall(r"'([^']+)'", msg.split(";", 1)[0]):
            line = line or line_of_key(text, name) or line_of_value(text, name)
        raise CollectError(p, msg, line=line, fix="see docs/collect.md for the spec's keys") from None
