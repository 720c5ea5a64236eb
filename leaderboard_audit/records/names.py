"""Model and benchmark names as they appear in paths (docs/records.md, "Layout")."""

from __future__ import annotations

from .errors import RecordsError

# A benchmark may not take a name the audit uses for its own scopes: `pooled` is every
# benchmark together, and a benchmark of that name would collide with it in test ids.
RESERVED_BENCHMARKS = ("pooled",)


def model_from_filename(stem: str) -> str:
    return stem.replace("__", "/")


def filename_for_model(model: str) -> str:
    if not model or model in (".", "..") or "\\" in model or "\x00" in model or model.startswith("."):
        raise RecordsError.one("<records>", None, f"model name {model!r} cannot be a file name", fix="rename the model")
    return model.replace("/", "__") + ".jsonl"


def reserved_benchmark(name: str) -> bool:
    """True for a benchmark name the audit reserves (compared case-insensitively)."""
    return name.strip().lower() in RESERVED_BENCHMARKS


RESERVED_FIX = (
    f"rename the benchmark: {', '.join(repr(n) for n in RESERVED_BENCHMARKS)} is the "
    "audit's scope of all benchmarks together"
)


def benchmark_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a benchmark (a directory name the reader would read back), or None."""
    if not isinstance(name, str) or not name or name.startswith((".", "_")) or any(c in name for c in "/\\\x00"):
        return f"benchmark name {name!r} cannot be a directory name (no '/', '\\', NUL; no leading '.' or '_')"
    if reserved_benchmark(name):
        return f"benchmark name {name!r} is reserved"
    return None
