"""The vendored lm-eval sample logs of SmolLM2-135M-Instruct and the mapping that imports them."""

from __future__ import annotations

from helpers.paths import DATA

LMEVAL = DATA / "lm-eval-samples"
SMOL = LMEVAL / "SmolLM2-135M-Instruct"
SMOL_NAME = "HuggingFaceTB/SmolLM2-135M-Instruct"

SMOL_LL = {
    "runs": {
        "arc_challenge_local": {"config": {"scoring": "ll", "template": "cloze_question"}},
        "arc_challenge_local_bare": {"config": {"scoring": "ll", "template": "cloze_plain"}},
    },
    "benchmark": "arc",
    "model": SMOL_NAME,
    "reference": "ll|cloze_question",
}
