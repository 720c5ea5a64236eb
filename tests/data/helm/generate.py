"""Writes the hand-made HELM suite under benchmark_output/runs/v1/ (committed output).

Not produced by HELM: a small tree built by hand with HELM's real file schemas, so the
HELM importer can be tested without installing crfm-helm. Field names follow
stanford-crfm/helm (src/helm/benchmark/):
  run_spec.json           -> run_spec.py RunSpec (name, scenario_spec, adapter_spec,
                             metric_specs, data_augmenter_spec, groups)
  scenario_state.json     -> adaptation/scenario_state.py ScenarioState
                             (adapter_spec, request_states: adaptation/request_state.py
                             RequestState: instance, train_trial_index, output_mapping,
                             request, result, num_train_instances, prompt_truncated,
                             reference_index, request_mode); Instance/Reference/Output in
                             scenarios/scenario.py; PerturbationDescription in
                             augmentations/perturbation_description.py
  per_instance_stats.json -> metrics/metric.py PerInstanceStats (instance_id, perturbation,
                             train_trial_index, stats: metrics/statistic.py Stat with
                             name = metrics/metric_name.py MetricName)
2 models x (original + 2 perturbations) x 2 train trials x 4 MMLU-anatomy-like instances.
Regenerate: python tests/data/helm/generate.py
"""
from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent / "benchmark_output" / "runs" / "v1"
INSTANCES = [
    ("id12", "Which of the following is the body cavity that contains the pituitary gland?",
     ["Abdominal", "Cranial", "Pleural", "Spinal"], 1),
    ("id27", "What is the embryological origin of the hyoid bone?",
     ["The first pharyngeal arch", "The first and second pharyngeal arches",
      "The second pharyngeal arch", "The second and third pharyngeal arches"], 3),
    ("id31", "Which of these branches of the trigeminal nerve contain somatic motor processes?",
     ["The supraorbital nerve", "The infraorbital nerve", "The mental nerve", "None of the above"], 3),
    ("id44", "The pleura",
     ["have no sensory innervation.", "are separated by a 2 mm space.",
      "extend into the neck.", "are composed of respiratory epithelium."], 2),
]
PERTS = {
    None: None,
    "typos": {"name": "typos", "robustness": True, "fairness": False, "computed_on": "perturbed", "seed": None},
    "lowercase": {"name": "lowercase", "robustness": True, "fairness": False, "computed_on": "perturbed", "seed": None},
}
MODELS = {"openai/gpt2": "openai_gpt2", "eleutherai/pythia-1b-v0": "eleutherai_pythia-1b-v0"}
LETTERS = "ABCD"
# answer letter per (model, instance, perturbation, trial); "?" = unparseable output
ANSWERS = {
    "openai/gpt2": {"id12": "BBAA BBBB BBAB", "id27": "DCDD DDCC ADDD", "id31": "AAAA AABA AAAA",
                    "id44": "CCCC CCCC CCCC"},
    "eleutherai/pythia-1b-v0": {"id12": "BBBB BBBB BBBB", "id27": "DDDD DDDD D?DD", "id31": "DDDD DCDD DDDD",
                                "id44": "CACA CCCC CCCC"},
}


def perturb(text: str, pert: str | None) -> str:
    if pert == "typos":
        return text.replace("the", "teh").replace("of", "fo")
    if pert == "lowercase":
        return text.lower()
    return text


def answer(model: str, iid: str, pert: str | None, trial: int) -> str:
    groups = ANSWERS[model][iid].split()
    g = [None, "typos", "lowercase"].index(pert)
    return groups[g][trial]


def adapter_spec(model: str) -> dict:
    return {"method": "multiple_choice_joint", "global_prefix": "",
            "instructions": "The following are multiple choice questions (with answers) about anatomy.\n",
            "input_prefix": "Question: ", "input_suffix": "\n", "reference_prefix": "A. ",
            "reference_suffix": "\n", "output_prefix": "Answer: ", "output_suffix": "\n",
            "instance_prefix": "\n", "substitutions": [], "max_train_instances": 2,
            "max_eval_instances": 4, "num_outputs": 1, "num_train_trials": 2, "sample_train": True,
            "model_deployment": f"huggingface/{model.split('/')[1]}", "model": model,
            "temperature": 0.0, "max_tokens": 1, "stop_sequences": ["\n"], "multi_label": False}


def main() -> None:
    for model, safe in MODELS.items():
        name = f"mmlu:subject=anatomy,method=multiple_choice_joint,model={safe},data_augmentation=typos_lowercase"
        d = HERE / name
        d.mkdir(parents=True, exist_ok=True)
        spec = {
            "name": name,
            "scenario_spec": {"class_name": "helm.benchmark.scenarios.mmlu_scenario.MMLUScenario",
                              "args": {"subject": "anatomy"}},
            "adapter_spec": adapter_spec(model),
            "metric_specs": [{"class_name": "helm.benchmark.metrics.basic_metrics.BasicGenerationMetric",
                              "args": {"names": ["exact_match", "quasi_exact_match",
                                                 "prefix_exact_match", "quasi_prefix_exact_match"]}}],
            "data_augmenter_spec": {
                "perturbation_specs": [
                    {"class_name": "helm.benchmark.augmentations.typos_perturbation.TyposPerturbation",
                     "args": {"prob": 0.1}},
                    {"class_name": "helm.benchmark.augmentations.lowercase_perturbation.LowerCasePerturbation",
                     "args": {}}],
                "should_augment_train_instances": False, "should_include_original_train": True,
                "should_skip_unchanged_train": True, "should_augment_eval_instances": True,
                "should_include_original_eval": True, "should_skip_unchanged_eval": True,
                "seeds_per_instance": 1},
            "groups": ["mmlu"],
        }
        states, stats = [], []
        for trial in (0, 1):
            for iid, q, opts, gold in INSTANCES:
                for pert, desc in PERTS.items():
                    inst = {"input": {"text": perturb(q, pert)},
                            "references": [{"output": {"text": perturb(o, pert)},
                                            "tags": ["correct"] if j == gold else []}
                                           for j, o in enumerate(opts)],
                            "split": "test", "id": iid}
                    if desc is not None:
                        inst["perturbation"] = desc
                    letter = answer(model, iid, pert, trial)
                    text = " " + (letter if letter != "?" else "The")
                    mapping = {LETTERS[j]: perturb(o, pert) for j, o in enumerate(opts)}
                    prompt = (adapter_spec(model)["instructions"] + "\nQuestion: " + perturb(q, pert) + "\n"
                              + "".join(f"{LETTERS[j]}. {perturb(o, pert)}\n" for j, o in enumerate(opts))
                              + "Answer:")
                    states.append({
                        "instance": inst, "train_trial_index": trial, "output_mapping": mapping,
                        "request": {"model_deployment": adapter_spec(model)["model_deployment"],
                                    "model": model, "embedding": False, "prompt": prompt,
                                    "temperature": 0.0, "num_completions": 1, "top_k_per_token": 5,
                                    "max_tokens": 1, "stop_sequences": ["\n"], "echo_prompt": False,
                                    "top_p": 1, "presence_penalty": 0, "frequency_penalty": 0},
                        "result": {"success": True, "embedding": [],
                                   "completions": [{"text": text, "logprob": -0.6931,
                                                    "tokens": [{"text": text, "logprob": -0.6931}]}],
                                   "cached": True, "request_time": 0.05,
                                   "request_datetime": 1700000000},
                        "num_train_instances": 2, "prompt_truncated": False,
                        "reference_index": None, "request_mode": None})
                    em = float(letter != "?" and LETTERS.index(letter) == gold)
                    mname = {"name": "exact_match", "split": "test"}
                    if desc is not None:
                        mname["perturbation"] = desc
                    entry = {"instance_id": iid, "train_trial_index": trial, "stats": [
                        {"name": mname, "count": 1, "sum": em, "sum_squared": em, "min": em,
                         "max": em, "mean": em, "variance": 0.0, "stddev": 0.0},
                        {"name": {**mname, "name": "num_prompt_tokens"}, "count": 1, "sum": 120.0,
                         "sum_squared": 14400.0, "min": 120.0, "max": 120.0, "mean": 120.0,
                         "variance": 0.0, "stddev": 0.0}]}
                    if desc is not None:
                        entry["perturbation"] = desc
                    stats.append(entry)
        (d / "run_spec.json").write_text(json.dumps(spec, indent=2) + "\n")
        (d / "scenario_state.json").write_text(json.dumps({"adapter_spec": spec["adapter_spec"],
                                                           "request_states": states}, indent=2) + "\n")
        (d / "per_instance_stats.json").write_text(json.dumps(stats, indent=2) + "\n")


if __name__ == "__main__":
    main()
