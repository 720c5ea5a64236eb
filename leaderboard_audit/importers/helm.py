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

import json
import math
import os
from pathlib import Path
from typing import Any

from ..records.errors import ProblemLog, RecordsError
from ..records.grid import Config
from ..records.model import Records
from ._build import ItemMeta, Unit, build_records
from ._values import answer_index, to_bit

MAX_JSON_BYTES = 512 * 1024 * 1024
RUN_FILES = ("run_spec.json", "scenario_state.json", "per_instance_stats.json")
NOT_CONFIG_ARGS = {"model", "model_deployment", "data_augmentation"}
ADAPTER_FIELDS = ("method", "global_prefix", "instructions", "input_prefix", "input_suffix",
                  "reference_prefix", "reference_suffix", "output_prefix", "output_suffix",
                  "instance_prefix", "max_train_instances", "num_train_trials", "sample_train",
                  "temperature", "max_tokens", "stop_sequences", "num_outputs")
SEPARATE_METHODS = ("multiple_choice_separate_original", "multiple_choice_separate_calibrated")


def _read(path: Path, log: ProblemLog) -> Any:
    try:
        size = path.stat().st_size
    except OSError:
        log.add(str(path), None, "missing", fix=f"a HELM run folder holds {', '.join(RUN_FILES)}")
        return None
    if size > MAX_JSON_BYTES:
        log.add(str(path), None, f"larger than {MAX_JSON_BYTES} bytes")
        return None
    try:
        return json.loads(path.read_bytes())
    except ValueError as exc:
        log.add(str(path), None, f"unreadable JSON ({exc})")
        return None


def parse_run_name(name: str) -> tuple[str, dict[str, str]]:
    """``mmlu:subject=anatomy,method=multiple_choice_joint,model=openai_gpt2`` -> (scenario, args)."""
    scen, _, rest = name.partition(":")
    args: dict[str, str] = {}
    for part in rest.split(","):
        if "=" in part:
            k, v = part.split("=", 1)
            args[k.strip()] = v.strip()
        elif part.strip() and args:       # a value with a comma in it
            last = next(reversed(args))
            args[last] += "," + part
    return scen, args


def _pert_name(p: Any) -> str:
    if not isinstance(p, dict) or not p.get("name"):
        return "original"
    name = str(p["name"])
    if p.get("seed") is not None:
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
    hits = [s for s in stats if isinstance(s, dict) and isinstance(s.get("name"), dict)
            and s["name"].get("name") == metric]
    if not hits:
        return None, KeyError
    hits.sort(key=lambda s: s["name"].get("perturbation") is not None)
    s = hits[0]
    val = s.get("mean")
    if val is None and s.get("count"):
        val = s.get("sum", 0) / s["count"]
    return to_bit(val), val


def load_helm(src: str | os.PathLike[str], *, metric: str | None = None, mapping: Any = None,
              intersect: bool = False, reference: str | None = None, model: str | None = None,
              benchmark: str | None = None) -> Records:
    """Import a HELM suite folder (``benchmark_output/runs/<suite>``) as Records."""
    from .lmeval import load_mapping, _lookup
    metric = metric or "exact_match"
    root = Path(src)
    if not root.is_dir():
        raise RecordsError.one(str(root), None, "not a HELM suite folder",
                               fix="pass benchmark_output/runs/<suite>")
    mp = load_mapping(mapping)
    log = ProblemLog()
    notes: list[str] = []
    run_dirs = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith((".", "eval_cache")))
        if "run_spec.json" in filenames:
            run_dirs.append(Path(dirpath))
            dirnames[:] = []
    if not run_dirs:
        raise RecordsError.one(str(root), None, "no run folder (run_spec.json) under this folder",
                               fix="pass benchmark_output/runs/<suite>")
    runs = []
    for d in run_dirs:
        spec = _read(d / "run_spec.json", log)
        state = _read(d / "scenario_state.json", log)
        pis = _read(d / "per_instance_stats.json", log)
        if spec is None or state is None or pis is None:
            continue
        if not isinstance(spec, dict) or not isinstance(spec.get("name", d.name), str):
            log.add(str(d / "run_spec.json"), None, "not a HELM RunSpec object")
            continue
        if not isinstance(state, dict) or not isinstance(state.get("request_states"), list):
            log.add(str(d / "scenario_state.json"), None, "no 'request_states' list")
            continue
        if not isinstance(pis, list):
            log.add(str(d / "per_instance_stats.json"), None, "expected a list of PerInstanceStats")
            continue
        runs.append((d, spec, state, pis))
    log.raise_if_any()

    # config-prefix args: run-name args that are not the model/augmentation/scenario's own
    parsed = []
    for d, spec, state, pis in runs:
        scen, args = parse_run_name(spec.get("name") or d.name)
        sargs = (spec.get("scenario_spec") or {}).get("args") or {}
        sargs = {k: v for k, v in sargs.items() if isinstance(v, (str, int, float, bool))}
        cfg_args = {k: v for k, v in args.items() if k not in NOT_CONFIG_ARGS and k not in sargs}
        parsed.append((scen, args, sargs, cfg_args))
    distinct = {tuple(sorted(c.items())) for *_, c in parsed}
    show_prefix = len(distinct) > 1

    units: list[Unit] = []
    for (d, spec, state, pis), (scen, args, sargs, cfg_args) in zip(runs, parsed):
        where = str(d)
        names = [d.name, spec.get("name") or d.name]
        st = dict(mp.get("runs") and _lookup(mp["runs"], names) or {})
        if "runs" in mp and not st:
            notes.append(f"not in the mapping, so not imported: {d.name}")
            continue
        adapter = spec.get("adapter_spec") or state.get("adapter_spec") or {}
        mdl = model or st.get("model") or mp.get("model") or adapter.get("model") or args.get("model")
        if not mdl:
            log.add(where, None, "cannot tell the model", fix="--model or 'model' in the mapping")
            continue
        bench = benchmark or st.get("benchmark") or mp.get("benchmark") or scen
        method = adapter.get("method") or args.get("method") or "generation"
        scoring = "ll" if method in SEPARATE_METHODS else "gen"
        item_prefix = "/".join(f"{k}={sargs[k]}" for k in sorted(sargs))
        prefix = ",".join(f"{k}={v}" for k, v in sorted(cfg_args.items()))
        # scenario_state: instances, predictions
        meta: dict[str, ItemMeta] = {}
        preds: dict[tuple[str, str, int], int | None] = {}
        sep_scores: dict[tuple[str, str, int], dict[int, float]] = {}
        pert_desc: dict[str, Any] = {}
        for rs in state["request_states"]:
            if not isinstance(rs, dict) or not isinstance(rs.get("instance"), dict):
                continue
            inst = rs["instance"]
            iid = inst.get("id")
            if not isinstance(iid, str):
                continue
            pert = _pert_name(inst.get("perturbation"))
            if pert != "original":
                pert_desc.setdefault(pert, inst.get("perturbation"))
            trial = rs.get("train_trial_index", 0)
            refs = inst.get("references") if isinstance(inst.get("references"), list) else []
            options = [_text(r.get("output")) or "" for r in refs if isinstance(r, dict)]
            key = f"{item_prefix}/{iid}" if item_prefix else iid
            if pert == "original" or key not in meta:
                gold = next((j for j, r in enumerate(refs) if isinstance(r, dict)
                             and "correct" in (r.get("tags") or [])), None)
                meta[key] = ItemMeta(key, gold, _text(inst.get("input")), options or None)
            result = rs.get("result") if isinstance(rs.get("result"), dict) else {}
            comps = result.get("completions") if isinstance(result.get("completions"), list) else []
            if method in SEPARATE_METHODS:
                ri = rs.get("reference_index")
                lp = comps[0].get("logprob") if comps and isinstance(comps[0], dict) else None
                if isinstance(ri, int) and isinstance(lp, (int, float)) and math.isfinite(lp) \
                        and rs.get("request_mode") in (None, "original"):
                    sep_scores.setdefault((key, pert, trial), {})[ri] = float(lp)
                continue
            text = comps[0].get("text") if comps and isinstance(comps[0], dict) else None
            if not options and not isinstance(text, str):
                continue
            om = rs.get("output_mapping")
            p = None
            if isinstance(text, str):
                t = text.strip()
                if isinstance(om, dict) and t in om and om[t] in options:
                    p = options.index(om[t])
                else:
                    p = answer_index(t, options or None)
            preds[(key, pert, trial)] = p if options else None
        for k, sc in sep_scores.items():
            if sc:
                preds[k] = max(sc, key=lambda i: sc[i])
        # per_instance_stats: the bits
        by_cfg: dict[tuple[str, int], Unit] = {}
        for n, e in enumerate(pis):
            if not isinstance(e, dict) or not isinstance(e.get("instance_id"), str):
                log.add(str(d / "per_instance_stats.json"), None, f"entry {n}: no 'instance_id'")
                continue
            pert = _pert_name(e.get("perturbation"))
            trial = e.get("train_trial_index", 0)
            if not isinstance(trial, int):
                log.add(str(d / "per_instance_stats.json"), None, f"entry {n}: bad train_trial_index")
                continue
            bit, raw = _stat_bit(e.get("stats"), metric)
            iid = e["instance_id"]
            if bit is None:
                what = f"no {metric!r} stat" if raw is KeyError else f"{metric} = {raw!r} is not 0/1"
                log.add(str(d / "per_instance_stats.json"), None,
                        f"instance {iid!r} ({pert}, trial {trial}): {what}",
                        fix="choose a per-instance 0/1 stat with metric= (--metric)")
                continue
            key = f"{item_prefix}/{iid}" if item_prefix else iid
            parts = ([prefix] if show_prefix and prefix else []) + [pert, f"t{trial}"]
            ckey = "|".join(parts)
            u = by_cfg.get((pert, trial))
            if u is None:
                extra = {"source": "helm", "run": spec.get("name") or d.name, "metric": metric,
                         "perturbation": pert_desc.get(pert) if pert != "original" else None,
                         "train_trial_index": trial, "run_args": cfg_args,
                         "adapter_spec": {k: adapter[k] for k in ADAPTER_FIELDS if k in adapter},
                         "data_augmenter_spec": spec.get("data_augmenter_spec")}
                cfg = Config(ckey, scoring, method, None, None,
                             {k: v for k, v in extra.items() if v not in (None, {}, [])})
                u = by_cfg[(pert, trial)] = Unit(where, str(bench), str(mdl), cfg)
            if key in u.bits:
                log.add(str(d / "per_instance_stats.json"), None,
                        f"instance {iid!r} ({pert}, trial {trial}) appears twice")
                continue
            u.bits[key] = bit
            if (key, pert, trial) in preds:
                u.pred[key] = preds[(key, pert, trial)]
            if key in meta:
                u.meta[key] = meta[key]
        units.extend(by_cfg.values())
    log.raise_if_any()
    ref = reference or mp.get("reference")
    if ref is None and any(u.config.key.endswith("original|t0") for u in units):
        ref = next(u.config.key for u in units if u.config.key.endswith("original|t0"))
    return build_records(units, source=str(root), reference=ref,
                         intersect=intersect, notes=notes,
                         grid_extra={"imported_from": "helm", "source": str(root)},
                         match_what="instance")
