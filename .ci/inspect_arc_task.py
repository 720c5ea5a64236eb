"""A small Inspect AI multiple-choice task over ARC-Challenge items (.ci/inspect_check.sh).

``inspect eval .ci/inspect_arc_task.py -T parquet=ARC.parquet -T n=20 -T shuffle=0``
builds a ``MemoryDataset`` from the first ``n`` rows of the ARC-Challenge parquet of
../shared/benchmarks/ai2_arc and scores Inspect's ``multiple_choice()`` solver (its own
prompt template) with its ``choice()`` scorer. Each sample's input is one worked example
(a user turn and the assistant's ``ANSWER: B``) and then the question, so that a
135M-parameter model answers in the ``ANSWER: $LETTER`` form the scorer parses.
``shuffle=SEED`` (not 0) shuffles every item's options with Inspect's
``Dataset.shuffle_choices(seed=SEED)``: one log per setting = one configuration.
"""

from __future__ import annotations

import pyarrow.parquet as pq
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, GenerateConfig
from inspect_ai.scorer import choice
from inspect_ai.solver import multiple_choice

EXAMPLE = (
    "Answer the following multiple choice question. The entire content of your response should be of the "
    "following format: 'ANSWER: $LETTER' (without quotes) where LETTER is one of A,B,C,D.\n\n"
    "Which gas do plants take in from the air to make food?\n\n"
    "A) oxygen\nB) carbon dioxide\nC) helium\nD) neon"
)


def arc_samples(parquet: str, n: int) -> list[Sample]:
    rows = pq.read_table(parquet).slice(0, n).to_pylist()
    out = []
    for r in rows:
        labels = list(r["choices"]["label"])
        out.append(
            Sample(
                id=r["id"],
                input=[
                    ChatMessageUser(content=EXAMPLE),
                    ChatMessageAssistant(content="ANSWER: B"),
                    ChatMessageUser(content=r["question"]),  # multiple_choice() formats the last user turn
                ],
                choices=list(r["choices"]["text"]),
                target=chr(ord("A") + labels.index(r["answerKey"])),  # ARC keys may be "1".."4"
                metadata={"answerKey": r["answerKey"]},
            )
        )
    return out


@task
def arc_mc(parquet: str, n: int = 20, shuffle: int = 0) -> Task:
    dataset = MemoryDataset(arc_samples(parquet, int(n)), name="ai2_arc/ARC-Challenge-test")
    if int(shuffle):
        dataset.shuffle_choices(seed=int(shuffle))
    return Task(
        dataset=dataset,
        solver=multiple_choice(),
        scorer=choice(),
        config=GenerateConfig(max_tokens=8),  # greedy: -M do_sample=false
    )
