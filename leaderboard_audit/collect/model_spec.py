"""One model of a collection spec (``[[models]]``, and the judge stage's ``[[judge.models]]``).

Apart from spec.py so that the judge stage (collect/judge.py), which spec.py reads the
``[judge]`` table with, parses its judges the same way without importing spec.py back.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ModelSpec:
    name: str
    path: str
    dtype: str = "auto"  # bfloat16 on a CUDA GPU, float32 on CPU (engines resolve it)
    chat_template: bool = False
    options: dict[str, Any] = field(default_factory=dict)
    chat_template_kwargs: dict[str, Any] = field(default_factory=dict)  # e.g. enable_thinking = false


def check_model_name(name: str) -> None:
    """A model name becomes a file name under each benchmark folder: refuse one that escapes it."""
    from .errors import CollectError

    bad = (
        not name
        or name.startswith((".", "/"))
        or "\\" in name
        or "\x00" in name
        or any(part in ("", ".", "..") for part in name.split("/"))
        or any(ord(ch) < 32 or ord(ch) == 127 for ch in name)
    )
    if bad:
        raise CollectError(
            name,
            f"model name {name!r} cannot be a records file name (it must not start with "
            "'.' or '/', hold '..' or empty path parts, backslashes or control characters)",
            fix="give the [[models]] entry a plain `name`",
        )


def model_from_obj(m: Any, rel: Any) -> ModelSpec:
    """One [[models]] (or [[judge.models]]) entry."""
    if not isinstance(m, dict) or "path" not in m:
        raise ValueError("each [[models]] entry needs a 'path'")
    path = str(m["path"])
    if not path.startswith("gguf:") and (path.startswith((".", "/", "~"))):
        path = str(rel(path))
    mk = set(m) - {"name", "path", "dtype", "chat_template", "options", "chat_template_kwargs"}
    if mk:
        raise ValueError(
            f"unknown [[models]] key(s) {', '.join(repr(k) for k in sorted(mk))}; known: "
            "name, path, dtype, chat_template, options, chat_template_kwargs"
        )
    return ModelSpec(
        str(m.get("name") or path.split(":")[-1].rstrip("/").split("/")[-1]),
        path,
        str(m.get("dtype", "auto")),
        bool(m.get("chat_template", False)),
        dict(m.get("options") or {}),
        dict(m.get("chat_template_kwargs") or {}),
    )


def models_from_list(entries: Any, rel: Any, *, what: str, empty: str) -> list[ModelSpec]:
    """A list of [[models]]-like entries, each name a safe file name and unique; ``what``
    names them in the error ("model", "judge"), ``empty`` is the error when there are none."""
    models = [model_from_obj(m, rel) for m in entries or []]
    if not models:
        raise ValueError(empty)
    names = [m.name for m in models]
    for name in names:
        check_model_name(name)
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise ValueError(f"{what} name '{dup}' appears twice; {what} names must be unique")
    return models
