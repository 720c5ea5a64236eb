"""Item selection (paper appendix A.2) and row -> item conversion, on the vendored Parquet slices
(tests/data/benchmarks, README there) and, where this workspace has them, the full files in ../shared."""

from __future__ import annotations

from pathlib import Path

import pytest

from leaderboard_audit.collect.benchmarks import (
    SOURCES,
    arc_item,
    hellaswag_item,
    load_items,
    local_file,
    mmlu_item,
    select_items,
    shuffle_order,
    truthfulqa_item,
)

DATA = Path(__file__).resolve().parent / "data" / "benchmarks"
SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "benchmarks"
# Four-option pool sizes and the first two selected ids, per folder. A slice is its own file:
# its shuffle and its MMLU row indices differ from the full file's.
EXPECTED = {
    "data": (
        {"arc": 40, "hellaswag": 40, "mmlu": 40, "truthfulqa": 36},
        {
            "arc": ["arc/Mercury_SC_401668", "arc/MEA_2013_8_15"],
            "hellaswag": ["hellaswag/6437", "hellaswag/10041"],
            "mmlu": ["mmlu/moral_scenarios/25", "mmlu/world_religions/39"],
            "truthfulqa": ["truthfulqa/55d61d18c287", "truthfulqa/576d30b484fd"],
        },
    ),
    "shared": (
        {"arc": 1165, "hellaswag": 10042, "mmlu": 14042, "truthfulqa": 664},
        {
            "arc": ["arc/Mercury_7004725", "arc/Mercury_7222600"],
            "hellaswag": ["hellaswag/5302", "hellaswag/1072"],
            "mmlu": ["mmlu/elementary_mathematics/2121", "mmlu/high_school_psychology/5067"],
            "truthfulqa": ["truthfulqa/457ccf0dbb84", "truthfulqa/50cfb3c4b904"],
        },
    ),
}
FOLDERS = {"data": DATA, **({"shared": SHARED} if SHARED.is_dir() else {})}


def _can_read_parquet() -> bool:
    try:
        import pyarrow  # noqa: F401

        return True
    except ImportError:
        try:
            import datasets  # noqa: F401

            return True
        except ImportError:
            return False


needs_parquet = pytest.mark.skipif(not _can_read_parquet(), reason="needs pyarrow or datasets")


def test_arc_keeps_exactly_four_choices():
    row = {
        "id": "X_1",
        "question": " Q ",
        "choices": {"text": ["a", "b", "c", "d"], "label": ["A", "B", "C", "D"]},
        "answerKey": "C",
    }
    it = arc_item(0, row)
    assert it is not None and (it.item_id, it.question, it.gold) == ("arc/X_1", "Q", 2)
    row3 = {**row, "choices": {"text": ["a", "b", "c"], "label": ["A", "B", "C"]}}
    assert arc_item(0, row3) is None
    rown = {**row, "choices": {"text": list("abcd"), "label": ["1", "2", "3", "4"]}, "answerKey": "4"}
    assert arc_item(0, rown).gold == 3


def test_truthfulqa_is_correct_answer_then_first_three_distractors():
    row = {"question": "Why?", "mc1_targets": {"choices": ["w1", "right", "w2", "w3", "w4"], "labels": [0, 1, 0, 0, 0]}}
    it = truthfulqa_item(7, row)
    assert it.options == ("right", "w1", "w2", "w3") and it.gold == 0
    assert it.item_id.startswith("truthfulqa/") and it.item_id == truthfulqa_item(99, row).item_id
    short = {"question": "Why?", "mc1_targets": {"choices": ["right", "w1", "w2"], "labels": [1, 0, 0]}}
    assert truthfulqa_item(0, short) is None


def test_mmlu_and_hellaswag_rows():
    it = mmlu_item(12, {"question": "q", "subject": "anatomy", "choices": ["a", "b", "c", "d"], "answer": 3})
    assert (it.item_id, it.gold) == ("mmlu/anatomy/12", 3)
    hs = {
        "ind": 5,
        "activity_label": "Cooking",
        "ctx_a": "A man [title] cuts.",
        "ctx_b": "",
        "ctx": "A man [title] cuts.",
        "endings": ["x", "y [step] z", "w", "v"],
        "label": "1",
    }
    it = hellaswag_item(0, hs)
    assert it.item_id == "hellaswag/5" and it.gold == 1
    assert it.question == "Cooking: A man. cuts." and it.options[1] == "y z"


def test_selection_reserves_five_and_is_seeded():
    rows = [{"id": i} for i in range(30)]
    from leaderboard_audit.collect.benchmarks import Item

    def to_item(i, r):
        return Item(f"t/{r['id']}", "q", ("a", "b", "c", "d"), 0)

    order = shuffle_order(30)
    got = select_items(rows, to_item, 10)
    assert [it.item_id for it in got] == [f"t/{j}" for j in order[5:15]]
    assert select_items(rows, to_item, None)[:10] == got  # N is a prefix cut
    assert len(select_items(rows, to_item, None)) == 25
    # numpy's default_rng(1234).permutation: what datasets' shuffle(seed=1234) uses
    import numpy as np

    assert order == np.random.default_rng(1234).permutation(30).tolist()


@needs_parquet
@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize("name", SOURCES)
def test_real_files_pool_sizes_and_stable_ids(name, folder):
    pool = EXPECTED[folder][0][name]
    items = load_items(name, None, files=str(local_file(name, FOLDERS[folder])))
    assert len(items) == pool - 5
    ids = [it.item_id for it in items]
    assert len(set(ids)) == len(ids) and all(i.startswith(name + "/") for i in ids)
    assert all(len(it.options) == 4 and 0 <= it.gold < 4 for it in items)
    first = load_items(name, 3, files=str(local_file(name, FOLDERS[folder])))
    assert [it.item_id for it in first] == ids[:3]
    if name == "truthfulqa":
        assert all(it.gold == 0 for it in items)


@needs_parquet
@pytest.mark.parametrize("folder", FOLDERS)
def test_first_items_are_pinned(folder):
    # Pinned so that a change of shuffle or pool breaks loudly (the committed grid depends on it).
    got = {n: [it.item_id for it in load_items(n, 2, files=str(local_file(n, FOLDERS[folder])))] for n in SOURCES}
    assert got == EXPECTED[folder][1]


def test_unknown_benchmark():
    with pytest.raises(ValueError, match="unknown benchmark 'nope'; known: arc, hellaswag, mmlu, truthfulqa"):
        load_items("nope", 3)
