"""The judge stage (docs/collect.md, "Judge stage"): the models under test answer open-ended
prompts, judge models compare each answer with a baseline's answer in both positions under
each declared judge prompt, and the judgments become records through the judged importer.

Layout written under the stage's output folder (Arena-Hard-Auto's, so every file is also
an input of ``leaderboard-audit import judged`` and ``pytest --audit``)::

    question.jsonl                            the prompts: question_id, turns, the baseline
    model_answer/<model>.jsonl                answers (Arena-Hard ``choices[0].turns[0].content``)
    model_judgment/<judge>/<model>.jsonl      both games per question and judge prompt
    records/                                  records (importers/judged.py) of model_judgment/
    summary.json                              parse classes per judge, prompt and game; position consistency
    manifest.json                             each file's fingerprint, SHA-256 and provenance

Each answers file and each (judge, model) judgments file is computed in one engine call,
written atomically, and certified in ``manifest.json`` by a fingerprint of what it depends
on (the model, engine, prompts, budgets, and the SHA-256 of the answers it judges); a
rerun skips every certified file and loads no model, so it is a no-op. A killed run
redoes at most the file it was writing.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from ..records.reader import filename_for_model
from ..records.writer import atomic_write_bytes, dumps_line
from .judge_prompts import JUDGE_PROMPTS, PARSE_CLASSES, parse_verdict
from .judge_spec import POSITIONS, REFERENCE, STAGE_VERSION, JudgeSpec

# --------------------------------------------------------------------------- prompts


def judge_prompt_text(prompt: str, question: str, baseline: str, answer: str, position: str) -> str:
    """The user turn of one game: ``baseline-first`` shows the baseline as Assistant A."""
    p = JUDGE_PROMPTS[prompt]
    if position == POSITIONS[0]:
        return p.render(question, baseline, answer)
    if position == POSITIONS[1]:
        return p.render(question, answer, baseline)
    raise ValueError(f"position {position!r}: expected one of {POSITIONS}")


def judge_prompt_ids(tok: Any, judge: Any, prompt: str, user_text: str) -> list[int]:
    """The judge's prompt ids: system and user turns in its chat template, or raw text."""
    from .prompts import prompt_ids

    p = JUDGE_PROMPTS[prompt]
    ids = prompt_ids(tok, user_text, judge.chat_template, p.system, judge.chat_template_kwargs)
    if p.prefill:  # the prefill's own tokens, without the special tokens encode() puts first
        lead, more = tok.encode(""), tok.encode(p.prefill)
        ids += more[len(lead) :] if more[: len(lead)] == lead else more
    return ids


def judgment_line(
    qid: str, model: str, judge: str, prompt: str, baseline: str, texts: list[str], unparsed: str
) -> tuple[dict[str, Any], list[str]]:
    """One Arena-Hard judgment line (both games) and the two games' parse classes. An
    unparsed game scores ``A=B`` under ``unparsed = "tie"`` and ``null`` under ``"drop"``
    (the importer then leaves the question out for that model and says how many)."""
    scale = JUDGE_PROMPTS[prompt].scale
    games, hows = [], []
    for text in texts:
        v = parse_verdict(text, scale)
        label = v.label if v.parsed else ("A=B" if unparsed == "tie" else None)
        games.append({"score": label, "judgment": text, "parse": v.how})
        hows.append(v.how)
    line = {
        "question_id": qid,
        "model": model,
        "judge": judge,
        "judge_prompt": prompt,
        "baseline": baseline,
        "games": games,
    }
    return line, hows


# --------------------------------------------------------------------------- files


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _fp(obj: Any) -> str:
    return _sha(json.dumps(obj, sort_keys=True, default=str).encode())


class _Manifest:
    """``manifest.json``: relative path -> fingerprint, SHA-256 and provenance (atomic rewrites)."""

    def __init__(self, root: Path) -> None:
        self.path = root / "manifest.json"
        self.root = root
        try:
            got = json.loads(self.path.read_bytes())
            self.files: dict[str, Any] = got["files"] if isinstance(got.get("files"), dict) else {}
        except (OSError, ValueError, AttributeError):
            self.files = {}

    def complete(self, rel: str, fp: str) -> bool:
        e = self.files.get(rel)
        if not isinstance(e, dict) or e.get("fingerprint") != fp:
            return False
        try:
            return _sha((self.root / rel).read_bytes()) == e.get("sha256")
        except OSError:
            return False

    def sha(self, rel: str) -> str:
        return str(self.files[rel]["sha256"])

    def write(self, rel: str, data: bytes, fp: str, provenance: dict[str, Any] | None = None) -> None:
        atomic_write_bytes(self.root / rel, data)
        self.files[rel] = {
            "fingerprint": fp,
            "sha256": _sha(data),
            **({"provenance": provenance} if provenance else {}),
        }
        self.save()

    def save(self) -> None:
        body = {"stage": "judge", "version": STAGE_VERSION, "files": self.files}
        atomic_write_bytes(self.path, (json.dumps(body, indent=1, sort_keys=True) + "\n").encode())


class _Engines:
    """One engine loaded at a time, kept while the next model needs the same weights and settings."""

    def __init__(self, spec: Any, factory: Any) -> None:
        self.spec, self.factory = spec, factory
        self.key: Any = None
        self.lazy: Any = None

    def get(self, m: Any) -> Any:
        from .cells import _Lazy

        key = (m.path, m.dtype, json.dumps(m.options, sort_keys=True))
        if key != self.key:
            self.close()
            self.key, self.lazy = key, _Lazy(self.spec, m, self.factory)
        return self.lazy

    def close(self) -> None:
        if self.lazy is not None:
            self.lazy.close()
        self.key = self.lazy = None


def _provenance(lazy: Any, m: Any) -> dict[str, Any]:
    """The engine's provenance with ``m``'s own settings (a shared engine was loaded for another entry)."""
    return {**lazy.provenance(), "model_source": m.path, "chat_template": m.chat_template}


def _say(progress: bool, msg: str) -> None:
    if progress:
        print(f"[judge] {msg}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- the stage


def run_judge(spec: Any, *, progress: bool = True, engine_factory: Any = None, verbose: bool = False) -> Path:
    """Answer, judge and import as the spec's ``[judge]`` table says; returns the records folder."""
    from .quiet import libraries_quiet

    with libraries_quiet(verbose):
        return _run(spec, progress, engine_factory)


def _run(spec: Any, progress: bool, engine_factory: Any) -> Path:
    from .cells import _load_benchmark_items
    from .run import _prepare_output

    js: JudgeSpec = spec.judge
    root = Path(js.output)
    _prepare_output(root)
    t0 = time.monotonic()
    items = _load_benchmark_items(
        dataclasses.replace(spec, benchmarks=[js.benchmark], n_items=js.n_items, item_offset=0)
    )[js.benchmark]
    man = _Manifest(root)
    questions = [
        {
            "question_id": it.item_id,
            "turns": [{"content": it.question}],
            "reference": it.options[it.gold] if 0 <= it.gold < len(it.options) else "",
        }
        for it in items
    ]
    qdata = "".join(dumps_line(q) + "\n" for q in questions).encode()
    qfp = _fp({"benchmark": js.benchmark, "questions": _sha(qdata)})
    if not man.complete("question.jsonl", qfp):
        man.write("question.jsonl", qdata, qfp)
    engines = _Engines(spec, engine_factory)
    try:
        answers = {m.name: _answers(spec, js, m, questions, man, engines, progress) for m in spec.models}
        if js.baseline == REFERENCE:
            base = [q["reference"] for q in questions]
            base_sha = _sha(json.dumps(base).encode())
        else:
            base = answers[js.baseline]
            base_sha = man.sha(f"model_answer/{filename_for_model(js.baseline)}")
        judged = [m for m in spec.models if m.name != js.baseline]
        rels = {
            (
                j.name,
                m.name,
            ): f"model_judgment/{filename_for_model(j.name)[: -len('.jsonl')]}/{filename_for_model(m.name)}"
            for j in js.judges
            for m in judged
        }
        wanted = {"question.jsonl", *rels.values()} | {
            f"model_answer/{filename_for_model(m.name)}" for m in spec.models
        }
        _drop_stale(man, wanted, progress)
        summary: dict[str, Any] = {"parse_classes": {}, "position_consistency": {}}
        for j in js.judges:
            for m in judged:
                rel = rels[(j.name, m.name)]
                fp = _fp(
                    {
                        "version": STAGE_VERSION,
                        "judge": asdict(j),
                        "engine": spec.engine,
                        "engine_options": spec.engine_options,
                        "prompts": [asdict(JUDGE_PROMPTS[p]) for p in js.prompts],
                        "max_tokens": js.judge_max_tokens,
                        "unparsed": js.unparsed,
                        "answers": man.sha(f"model_answer/{filename_for_model(m.name)}"),
                        "baseline": [js.baseline, base_sha],
                    }
                )
                if not man.complete(rel, fp):
                    _judge_file(spec, js, j, m, questions, answers[m.name], base, man, engines, rel, fp, progress)
                else:
                    _say(progress, f"{rel}: complete")
                _count(root / rel, summary)
    finally:
        engines.close()
    sdata = (json.dumps(_summary(summary, js), indent=1, sort_keys=True) + "\n").encode()
    if not (root / "summary.json").exists() or (root / "summary.json").read_bytes() != sdata:
        atomic_write_bytes(root / "summary.json", sdata)
    out = _records(js, root, man, progress)
    _say(progress, f"done: {root} ({time.monotonic() - t0:.1f}s)")
    return out


def _drop_stale(man: _Manifest, wanted: set[str], progress: bool) -> None:
    """Files an earlier run of this stage wrote for a model, judge or baseline the spec no
    longer names: removed, so the import reads the spec's judgments only."""
    stale = [rel for rel in man.files if rel != "records" and rel not in wanted]
    for rel in stale:
        (man.root / rel).unlink(missing_ok=True)
        del man.files[rel]
        _say(progress, f"{rel}: no longer in the spec; removed")
    if stale:
        man.files.pop("records", None)
        man.save()


def _answers(
    spec: Any, js: JudgeSpec, m: Any, questions: list[dict[str, Any]], man: _Manifest, engines: _Engines, progress: bool
) -> list[str]:
    from .prompts import prompt_ids

    rel = f"model_answer/{filename_for_model(m.name)}"
    fp = _fp(
        {
            "version": STAGE_VERSION,
            "model": asdict(m),
            "engine": spec.engine,
            "engine_options": spec.engine_options,
            "questions": [[q["question_id"], q["turns"][0]["content"]] for q in questions],
            "max_tokens": js.answer_max_tokens,
        }
    )
    if man.complete(rel, fp):
        _say(progress, f"{rel}: complete")
        lines = (man.root / rel).read_text(encoding="utf-8").splitlines()
        return [json.loads(x)["choices"][0]["turns"][0]["content"] for x in lines]
    t = time.monotonic()
    lazy = engines.get(m)
    eng = lazy.get()
    tok = eng.tokenizer
    ids = [prompt_ids(tok, q["turns"][0]["content"], m.chat_template, "", m.chat_template_kwargs) for q in questions]
    outs = eng.generate(ids, js.answer_max_tokens, seed=1234)
    texts = [tok.decode(o).strip() for o in outs]
    lines = [
        dumps_line(
            {
                "question_id": q["question_id"],
                "model_id": m.name,
                "choices": [{"index": 0, "turns": [{"content": text, "token_len": len(o)}]}],
            }
        )
        for q, text, o in zip(questions, texts, outs)
    ]
    man.write(rel, "".join(x + "\n" for x in lines).encode(), fp, _provenance(lazy, m))
    _say(progress, f"{rel}: {len(texts)} answers ({time.monotonic() - t:.1f}s)")
    return texts


def _judge_file(
    spec: Any,
    js: JudgeSpec,
    j: Any,
    m: Any,
    questions: list[dict[str, Any]],
    answers: list[str],
    base: list[str],
    man: _Manifest,
    engines: _Engines,
    rel: str,
    fp: str,
    progress: bool,
) -> None:
    t = time.monotonic()
    lazy = engines.get(j)
    eng = lazy.get()
    tok = eng.tokenizer
    games = [
        (q, p, judge_prompt_text(p, q["turns"][0]["content"], b, a, pos))
        for p in js.prompts
        for q, a, b in zip(questions, answers, base)
        for pos in POSITIONS
    ]
    ids = [judge_prompt_ids(tok, j, p, x) for _, p, x in games]
    outs = [
        JUDGE_PROMPTS[p].prefill + tok.decode(o) if JUDGE_PROMPTS[p].prefill else tok.decode(o).strip()
        for (_, p, _), o in zip(games, eng.generate(ids, js.judge_max_tokens, seed=1234))
    ]
    lines = []
    for k in range(0, len(games), 2):
        q, p, _ = games[k]
        line, _ = judgment_line(q["question_id"], m.name, j.name, p, js.baseline, outs[k : k + 2], js.unparsed)
        lines.append(dumps_line(line))
    man.write(rel, "".join(x + "\n" for x in lines).encode(), fp, _provenance(lazy, j))
    _say(progress, f"{rel}: {len(games)} games ({time.monotonic() - t:.1f}s)")


#: the judged model's outcome in a game, by label: game 1 shows the baseline as A, game 2 the model
_WINNER = {"A>>B": "baseline", "A>B": "baseline", "A=B": "tie", "B>A": "model", "B>>A": "model"}
_SWAP = {"baseline": "model", "model": "baseline", "tie": "tie"}
UNPARSED = ("conflict", "none", "empty")


def _count(path: Path, summary: dict[str, Any]) -> None:
    """Parse classes per (judge, prompt) and game, and position consistency, read back from
    a judgments file. A question is position-consistent when both games parsed and name the
    same winner (model, baseline or tie) once game 2's swap is undone: MT-Bench's
    consistency rate (Zheng et al., NeurIPS 2023, section 3.3)."""
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = json.loads(raw)
        key = f"{line['judge']}|{line['judge_prompt']}"
        for pos, game in zip(POSITIONS, line["games"]):
            c = summary["parse_classes"].setdefault(key, {}).setdefault(pos, dict.fromkeys(PARSE_CLASSES, 0))
            c[game["parse"]] += 1
        g1, g2 = line["games"]
        if g1["parse"] not in UNPARSED and g2["parse"] not in UNPARSED:
            k = summary["position_consistency"].setdefault(key, {"both_parsed": 0, "consistent": 0})
            k["both_parsed"] += 1
            k["consistent"] += _WINNER[g1["score"]] == _SWAP[_WINNER[g2["score"]]]


def _summary(summary: dict[str, Any], js: JudgeSpec) -> dict[str, Any]:
    return {
        "unparsed_rule": js.unparsed,
        **summary,
        "unparsed": {
            k: {pos: sum(c[x] for x in UNPARSED) for pos, c in v.items()} for k, v in summary["parse_classes"].items()
        },
    }


def summary_lines(root: Path) -> list[str]:
    """One line per judge and prompt: games judged, parsed, unparsed (and what became of them),
    and the questions whose two games agree once the positions are swapped back."""
    s = json.loads((root / "summary.json").read_text(encoding="utf-8"))
    rule = {"tie": "scored as ties (A=B)", "drop": "left out (null scores)"}[s["unparsed_rule"]]
    out = []
    for key, per in sorted(s["parse_classes"].items()):
        total = sum(sum(c.values()) for c in per.values())
        bad = {pos: sum(c[x] for x in UNPARSED) for pos, c in per.items()}
        parts = ", ".join(f"{pos} {n}" for pos, n in bad.items())
        k = s["position_consistency"].get(key, {"both_parsed": 0, "consistent": 0})
        out.append(
            f"judge verdicts {key}: {total} games, {total - sum(bad.values())} parsed, unparsed {parts} ({rule}); "
            f"position-consistent {k['consistent']} of {k['both_parsed']} questions with both games parsed"
        )
    return out


def _records(js: JudgeSpec, root: Path, man: _Manifest, progress: bool) -> Path:
    """``records/`` imported from ``model_judgment/`` (skipped when no judgments file changed)."""
    from ..importers._output import write_import
    from ..importers.judged import FORMAT_INFO, load_judged

    out = root / "records"
    if js.unparsed == "drop":
        _check_some_scored(js, root, man)
    shas = {k: v["sha256"] for k, v in sorted(man.files.items()) if k.startswith("model_judgment/")}
    fp = _fp({"judgments": shas, "benchmark": js.benchmark})
    if (out / "grid.json").exists() and man.files.get("records", {}).get("fingerprint") == fp:
        return out
    rec = load_judged(root / "model_judgment", intersect=js.unparsed == "drop", benchmark=f"{js.benchmark}-judged")
    # imported_from: the folder is an import, so the next import may replace it (importers/_output.py)
    extra = {**rec.grid.extra, "imported_from": FORMAT_INFO["name"], "source": "model_judgment/ (collect/judge.py)"}
    write_import(dataclasses.replace(rec, grid=dataclasses.replace(rec.grid, extra=extra)), out)
    man.files["records"] = {"fingerprint": fp}
    man.save()
    _say(progress, f"records: {out}")
    return out


def _check_some_scored(js: JudgeSpec, root: Path, man: _Manifest) -> None:
    """Under ``unparsed = "drop"`` every (judge, model, prompt) needs a question whose two
    games both parsed, or the records would lack that configuration."""
    from .errors import CollectError

    for rel in sorted(k for k in man.files if k.startswith("model_judgment/")):
        scored = {p: 0 for p in js.prompts}
        for raw in (root / rel).read_text(encoding="utf-8").splitlines():
            line = json.loads(raw)
            scored[line["judge_prompt"]] += all(g["score"] is not None for g in line["games"])
        empty = [p for p, n in scored.items() if n == 0]
        if empty:
            raise CollectError(
                root / rel,
                f"unparsed = 'drop' leaves no question with both games scored under judge prompt(s) "
                f"{', '.join(empty)}: nothing to import (summary.json counts the parse classes)",
                fix="set unparsed = 'tie', raise judge_max_tokens, or use the arena-hard-verdict-first prompt",
            )
