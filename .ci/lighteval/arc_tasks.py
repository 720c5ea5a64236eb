"""lighteval custom task for .ci/lighteval_check.sh: ARC-Challenge from a local parquet, offline.

``hf_repo`` is a local folder holding ``ARC-Challenge-test.parquet`` (``datasets``
infers the ``test`` split from the file name), given by ``ARC_LOCAL_DIR``. The prompt
variant comes from ``ARC_CI_TEMPLATE`` (``question`` or ``bare``): the check runs the
same task twice, once per variant, into two run folders = two configurations. The ARC
question id goes into ``Doc.specific["id"]`` so that it is in the details file.
"""

import os

from lighteval.metrics.metrics import Metrics
from lighteval.tasks.lighteval_task import LightevalTaskConfig
from lighteval.tasks.requests import Doc

TEMPLATES = {"question": "Question: {q}\nAnswer:", "bare": "{q}\nAnswer:"}
TEMPLATE = TEMPLATES[os.environ.get("ARC_CI_TEMPLATE", "question")]


def arc_local_prompt(line, task_name: str = None):
    return Doc(
        task_name=task_name,
        query=TEMPLATE.format(q=line["question"]),
        choices=[f" {c}" for c in line["choices"]["text"]],
        gold_index=line["choices"]["label"].index(line["answerKey"]),
        specific={"id": line["id"]},
    )


arc_ci = LightevalTaskConfig(
    name="arc_ci",
    prompt_function=arc_local_prompt,
    hf_repo=os.environ["ARC_LOCAL_DIR"],
    hf_subset="default",
    hf_avail_splits=["test"],
    evaluation_splits=["test"],
    few_shots_split=None,
    few_shots_select=None,
    generation_size=1,
    metrics=[Metrics.loglikelihood_acc],
    stop_sequence=["\n"],
    version=0,
)

TASKS_TABLE = [arc_ci]
