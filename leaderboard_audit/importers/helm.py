"""HELM ``benchmark_output/runs/<suite>`` -> records (issue 6).

Each run folder ``<suite>/<run name>/`` holds ``run_spec.json``,
``scenario_state.json`` and ``per_instance_stats.json`` (HELM's own dataclasses
serialised as JSON; field names as in stanford-crfm/helm ``RunSpec``,
``ScenarioState``/``RequestState``/``Instance`` and ``PerInstanceStats``/``Stat``,
see docs/importers.md). One run = one model x scenario (x adapter method).

Configurations are (perturbation, ``train_trial_index``) -- plus the run-name
arguments that are neither the model nor the scenario's own arguments (e.g.
``method=``) when runs differ in them. The bit of an instance is its per-instance
stat (``exact_match`` by default; any 0/1 stat can be chosen). Items are
``<scenario args>/<instance id>``; gold, question and options come from the
unperturbed instance in ``scenario_state.json``, predictions from the completion
(answer letter -> ``output_mapping`` -> reference).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..records.errors import ProblemLog, RecordsError
from ..records.grid import Config
from ..records.model import Records
from ._build import ItemMeta, Unit, build_records
from .fixes import FIX_MODEL_HELM
from ._files import obj, read_json_file
from ._values import answer_index, show, to_bit

FORMAT_INFO = {
    "name": "helm",
    "aliases": (),
    "description": "a HELM suite folder (benchmark_output/runs/SUITE)",
    "source": "benchmark_output/runs/<suite>",
    "patterns": ("run_spec.json", "scenario_state.json", "per_instance_stats.json"),
    "options": {
        "metric": "exact_match (default) or another per-instance stat",
        "mapping": "",
        "intersect": "",
        "reference": "",
        "model": "",
        "benchmark": "",
    },
    "loader": "load_helm",
}
MAX_JSON_BYTES = 512 * 1024 * 1024
RUN_FILES = FORMAT_INFO["patterns"]
NOT_CONFIG_ARGS = {"model", "model_deployment", "data_augmentation"}
ADAPTER_FIELDS = (
    "method",
    "global_prefix",
    "instructions",
    "input_prefix",
    "input_suffix",
    "reference_prefix",
    "reference_suffix",
    "output_prefix",
    "output_suffix",
    "instance_prefix",
    "max_train_instances",
    "num_train_trials",
    "sample_train",
    "temperature",
    "max_tokens",
    "stop_sequences",
    "num_outputs",
)
SEPARATE_METHODS = ("multiple_choice_separate_original", "multiple_choice_separate_calibrated")


def parse_run_name(name: str) -> tuple[str, dict[str, str]]:
    """``mmlu:subject=anatomy,method=multiple_choice_joint,model=openai_gpt2`` -> (scenario, args)."""
    scen, _, rest = name.partition(":")
    args: dict[str, str] = {}
    for part in rest.split(","):
        if "=" in part:
            k, v = part.split("=", 1)
            args[k.strip()] = v.strip()
        elif part.strip() and args:  # a value with a comma in it
            last = next(reversed(args))
            args[last] += "," + part
    return scen, args


def _pert_name(p: Any) -> str:
    if not isinstance(p, dict) or not isinstance(p.get("name"), str | int) or not p.get("name"):
        return "original"
    name = str(p["name"])
    if isinstance(p.get("seed"), str | int | float) and not isinstance(p.get("seed"), bool):
        name += f"@{p['seed']}"
    return name


def _text(obj: Any) -> str | None:
    if isinstance(obj, dict):
        t = obj.get("text")
        return t if isinstance(t, str) else None
    return obj if isinstance(obj, str) else None


def _stat_bit(stats: Any, metric: str) -> tuple[int | None, Any]:
    """The 0/1 value of ``metric`` among an entry's stats: (bit or None, raw value or KeyError)."""
    if not isinstance(stats, list):
        return None, KeyError
    hits = [
        s for s in stats if isinstance(s, dict) and isinstance(s.get("name"), dict) and s["name"].get("name") == metric
    ]
    if not hits:
        return None, KeyError
    hits.sort(key=lambda s: s["name"].get("perturbation") is not None)
    s = hits[0]
    val = s.get("mean")
    count, total = s.get("count"), s.get("sum", 0)
    if val is None and _is_number(count) and count and _is_number(total):
        val = total / count
    return to_bit(val), val


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


@dataclass
class HelmRun:
    """One run folder's three files, decoded, and what its name says."""

    dir: Path
    spec: dict[str, Any]
    state: dict[str, Any]
    stats: list[Any]
    scenario: str = ""
    args: dict[str, str] = field(default_factory=dict)  # run-name arguments
    scenario_args: dict[str, Any] = field(default_factory=dict)
    config_args: dict[str, str] = field(default_factory=dict)  # run-name args that name a config

    @property
    def name(self) -> str:
        return self.spec.get("name") or self.dir.name

    @property
    def adapter(self) -> dict[str, Any]:
        return obj(self.spec.get("adapter_spec")) or obj(self.state.get("adapter_spec"))


@dataclass
class RunSettings:
    """How one run's instances become units: model, benchmark, scoring, key prefixes."""

    model: str
    benchmark: str
    method: str
    scoring: str
    item_prefix: str  # "<scenario arg>=<value>/..." before each instance id
    config_prefix: str  # "<run arg>=<value>,..." before each config key (when runs differ)


@dataclass
class RequestFacts:
    """What scenario_state.json says about each instance: item facts and predictions."""

    meta: dict[str, ItemMeta] = field(default_factory=dict)
    preds: dict[tuple[str, str, int], int | None] = field(default_factory=dict)
    perturbations: dict[str, Any] = field(default_factory=dict)


def find_run_dirs(root: Path) -> list[Path]:
    """Every folder under ``root`` that holds a run_spec.json (not descending into runs)."""
    if not root.is_dir():
        raise RecordsError.one(str(root), None, "not a HELM suite folder", fix="pass benchmark_output/runs/<suite>")
    run_dirs = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "eval_cache")))
        if "run_spec.json" in filenames:
            run_dirs.append(Path(dirpath))
            dirnames[:] = []
    if not run_dirs:
        raise RecordsError.one(
            str(root), None, "no run folder (run_spec.json) under this folder", fix="pass benchmark_output/runs/<suite>"
        )
    return run_dirs


def read_run(d: Path, log: ProblemLog) -> HelmRun | None:
    """A run folder's three files, checked for the shapes HELM writes."""
    fix = f"a HELM run folder holds {', '.join(RUN_FILES)}"
    spec, state, stats = (read_json_file(d / f, log, MAX_JSON_BYTES, missing_fix=fix) for f in RUN_FILES)
    if spec is None or state is None or stats is None:
        return None
    if not isinstance(spec, dict) or not isinstance(spec.get("name", d.name), str):
        log.add(str(d / "run_spec.json"), None, "not a HELM RunSpec object")
        return None
    if not isinstance(state, dict) or not isinstance(state.get("request_states"), list):
        log.add(str(d / "scenario_state.json"), None, "no 'request_states' list")
        return None
    if not isinstance(stats, list):
        log.add(str(d / "per_instance_stats.json"), None, "expected a list of PerInstanceStats")
        return None
    run = HelmRun(d, spec, state, stats)
    run.scenario, run.args = parse_run_name(run.name)
    sargs = obj(obj(spec.get("scenario_spec")).get("args"))
    run.scenario_args = {k: v for k, v in sargs.items() if isinstance(v, str | int | float | bool)}
    run.config_args = {k: v for k, v in run.args.items() if k not in NOT_CONFIG_ARGS and k not in run.scenario_args}
    return run


def run_settings(
    run: HelmRun, st: dict[str, Any], mp: dict[str, Any], model: str | None, benchmark: str | None, log: ProblemLog
) -> RunSettings | None:
    adapter = run.adapter
    cands = (model, st.get("model"), mp.get("model"), adapter.get("model"), run.args.get("model"))
    mdl = next((c for c in cands if isinstance(c, str) and c), None)
    if not mdl:
        log.add(str(run.dir), None, "cannot tell the model", fix=FIX_MODEL_HELM)
        return None
    bench = benchmark or st.get("benchmark") or mp.get("benchmark") or run.scenario
    method = next(
        (m for m in (adapter.get("method"), run.args.get("method")) if isinstance(m, str) and m), "generation"
    )
    sargs = run.scenario_args
    return RunSettings(
        model=mdl,
        benchmark=str(bench),
        method=method,
        scoring="ll" if method in SEPARATE_METHODS else "gen",
        item_prefix="/".join(f"{k}={sargs[k]}" for k in sorted(sargs)),
        config_prefix=",".join(f"{k}={v}" for k, v in sorted(run.config_args.items())),
    )


def _item_key(prefix: str, iid: str) -> str:
    return f"{prefix}/{iid}" if prefix else iid


def _completion(rs: dict[str, Any]) -> dict[str, Any]:
    comps = obj(rs.get("result")).get("completions")
    return comps[0] if isinstance(comps, list) and comps and isinstance(comps[0], dict) else {}


def _predicted_option(rs: dict[str, Any], text: Any, options: list[str]) -> int | None:
    """An answer letter -> output_mapping -> option; else the letter or option text itself."""
    if not isinstance(text, str):
        return None
    t = text.strip()
    om = rs.get("output_mapping")
    if isinstance(om, dict) and t in om and isinstance(om[t], str) and om[t] in options:
        return options.index(om[t])
    return answer_index(t, options or None)


def read_request_states(state: dict[str, Any], settings: RunSettings) -> RequestFacts:
    """Item facts from the unperturbed instances; predictions per (item, perturbation, trial)."""
    facts = RequestFacts()
    sep_scores: dict[tuple[str, str, int], dict[int, float]] = {}
    for rs in state["request_states"]:
        inst = obj(rs).get("instance")
        if not isinstance(inst, dict) or not isinstance(inst.get("id"), str):
            continue
        trial = rs.get("train_trial_index", 0)
        if type(trial) is not int:
            continue
        pert = _pert_name(inst.get("perturbation"))
        if pert != "original":
            facts.perturbations.setdefault(pert, inst.get("perturbation"))
        refs = (
            [r for r in inst.get("references") or [] if isinstance(r, dict)]
            if isinstance(inst.get("references"), list)
            else []
        )
        options = [_text(r.get("output")) or "" for r in refs]
        key = _item_key(settings.item_prefix, inst["id"])
        if pert == "original" or key not in facts.meta:
            gold = next(
                (j for j, r in enumerate(refs) if isinstance(r.get("tags"), list) and "correct" in r["tags"]), None
            )
            facts.meta[key] = ItemMeta(key, gold, _text(inst.get("input")), options or None)
        comp = _completion(rs)
        if settings.method in SEPARATE_METHODS:
            ri, lp = rs.get("reference_index"), comp.get("logprob")
            if type(ri) is int and _is_number(lp) and rs.get("request_mode") in (None, "original"):
                sep_scores.setdefault((key, pert, trial), {})[ri] = float(lp)
            continue
        text = comp.get("text")
        if not options and not isinstance(text, str):
            continue
        facts.preds[(key, pert, trial)] = _predicted_option(rs, text, options) if options else None
    for k, sc in sep_scores.items():
        if sc:
            facts.preds[k] = max(sc, key=lambda i: sc[i])
    return facts


def _new_unit(
    run: HelmRun, settings: RunSettings, facts: RequestFacts, pert: str, trial: int, metric: str, show_prefix: bool
) -> Unit:
    parts = ([settings.config_prefix] if show_prefix and settings.config_prefix else []) + [pert, f"t{trial}"]
    adapter = run.adapter
    extra = {
        "source": "helm",
        "run": run.name,
        "metric": metric,
        "perturbation": facts.perturbations.get(pert) if pert != "original" else None,
        "train_trial_index": trial,
        "run_args": run.config_args,
        "adapter_spec": {k: adapter[k] for k in ADAPTER_FIELDS if k in adapter},
        "data_augmenter_spec": run.spec.get("data_augmenter_spec"),
    }
    cfg = Config(
        "|".join(parts),
        settings.scoring,
        settings.method,
        None,
        None,
        {k: v for k, v in extra.items() if v not in (None, {}, [])},
    )
    return Unit(str(run.dir), settings.benchmark, settings.model, cfg)


def units_from_stats(
    run: HelmRun, settings: RunSettings, facts: RequestFacts, metric: str, show_prefix: bool, log: ProblemLog
) -> list[Unit]:
    """per_instance_stats.json -> one unit per (perturbation, train trial), the bit = ``metric``."""
    where = str(run.dir / "per_instance_stats.json")
    by_cfg: dict[tuple[str, int], Unit] = {}
    for n, e in enumerate(run.stats):
        if not isinstance(e, dict) or not isinstance(e.get("instance_id"), str):
            log.add(where, None, f"entry {n}: no 'instance_id'")
            continue
        pert = _pert_name(e.get("perturbation"))
        trial = e.get("train_trial_index", 0)
        if type(trial) is not int:
            log.add(where, None, f"entry {n}: bad train_trial_index")
            continue
        bit, raw = _stat_bit(e.get("stats"), metric)
        iid = e["instance_id"]
        if bit is None:
            what = f"no {metric!r} stat" if raw is KeyError else f"{metric} = {show(raw)} is not 0/1"
            log.add(
                where,
                None,
                f"instance {iid!r} ({pert}, trial {trial}): {what}",
                fix="choose a per-instance 0/1 stat with metric= (--metric)",
            )
            continue
        u = by_cfg.get((pert, trial))
        if u is None:
            u = by_cfg[(pert, trial)] = _new_unit(run, settings, facts, pert, trial, metric, show_prefix)
        key = _item_key(settings.item_prefix, iid)
        if key in u.bits:
            log.add(where, None, f"instance {iid!r} ({pert}, trial {trial}) appears twice")
            continue
        u.bits[key] = bit
        if (key, pert, trial) in facts.preds:
            u.pred[key] = facts.preds[(key, pert, trial)]
        if key in facts.meta:
            u.meta[key] = facts.meta[key]
    return list(by_cfg.values())


def _default_reference(units: list[Unit]) -> str | None:
    return next((u.config.key for u in units if u.config.key.endswith("original|t0")), None)


def load_helm(
    src: str | os.PathLike[str],
    *,
    metric: str | None = None,
    mapping: Any = None,
    intersect: bool = False,
    reference: str | None = None,
    model: str | None = None,
    benchmark: str | None = None,
) -> Records:
    """Import a HELM suite folder (``benchmark_output/runs/<suite>``) as Records."""
    from .lmeval import _lookup, load_mapping

    metric = metric or "exact_match"
    root = Path(src)
    mp = load_mapping(mapping)
    log = ProblemLog()
    notes: list[str] = []
    runs = [r for r in (read_run(d, log) for d in find_run_dirs(root)) if r is not None]
    log.raise_if_any()
    # config-prefix args show in the keys only when the runs differ in them
    show_prefix = len({tuple(sorted(r.config_args.items())) for r in runs}) > 1
    units: list[Unit] = []
    for run in runs:
        st = dict(mp.get("runs") and _lookup(mp["runs"], [run.dir.name, run.name]) or {})
        if "runs" in mp and not st:
            notes.append(f"not in the mapping, so not imported: {run.dir.name}")
            continue
        settings = run_settings(run, st, mp, model, benchmark, log)
        if settings is None:
            continue
        facts = read_request_states(run.state, settings)
        units += units_from_stats(run, settings, facts, metric, show_prefix, log)
    log.raise_if_any()
    return build_records(
        units,
        source=str(root),
        reference=reference or mp.get("reference") or _default_reference(units),
        intersect=intersect,
        notes=notes,
        grid_extra={"imported_from": "helm", "source": str(root)},
        match_what="instance",
    )
