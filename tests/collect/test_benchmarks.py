"""Item selection (paper appendix A.2) and row -> item conversion, on the vendored Parquet slices
(tests/data/benchmarks, README there) and, where this workspace has them, the full files in ../shared."""

from __future__ import annotations


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
from helpers import paths

DATA = paths.DATA / "benchmarks"
SHARED = paths.SHARED / "benchmarks"
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


def test_truthfulqa_pool_is_mc1_with_three_distractors_not_mc2():
    # mc2 adds further correct answers and has the same distractors: a row short of mc1 distractors
    # is skipped whatever mc2 holds, and options come from mc1 only.
    mc2 = {"choices": ["right", "also right", "too", "w1", "w2"], "labels": [1, 1, 1, 0, 0]}
    short = {
        "question": "Q",
        "mc1_targets": {"choices": ["right", "w1", "w2"], "labels": [1, 0, 0]},
        "mc2_targets": mc2,
    }
    assert truthfulqa_item(0, short) is None
    four = {"question": "Q", "mc1_targets": {"choices": ["right", "w1", "w2", "w3"], "labels": [1, 0, 0, 0]}}
    assert truthfulqa_item(0, {**four, "mc2_targets": mc2}).options == ("right", "w1", "w2", "w3")


def _distractors(targets) -> int:
    return sum(1 for x in targets["labels"] if int(x) == 0)


@needs_parquet
@pytest.mark.parametrize("folder", FOLDERS)
def test_truthfulqa_pool_size_is_the_rows_with_three_mc1_distractors(folder):
    from leaderboard_audit.collect.benchmarks import load_rows

    f = str(local_file("truthfulqa", FOLDERS[folder]))
    rows = load_rows("truthfulqa", f)
    pool = sum(1 for r in rows if _distractors(r["mc1_targets"]) >= 3)
    assert pool == EXPECTED[folder][0]["truthfulqa"]
    assert len(load_items("truthfulqa", 1000, files=f)) == pool - 5


@needs_parquet
@pytest.mark.skipif("shared" not in FOLDERS, reason="needs ../shared/benchmarks")
def test_truthfulqa_790_row_revision_gives_664_not_the_papers_684():
    # docs/collect.md, "Benchmarks and item selection": the paper's 684 (679 evaluated) is the same rule
    # on the hub's 817-row revision; ../shared holds the later 790-row one. The other candidate rules
    # are pinned too, so a switch to any of them shows up here rather than as a silent pool change.
    from leaderboard_audit.collect.benchmarks import load_rows

    f = str(local_file("truthfulqa", SHARED))
    rows = load_rows("truthfulqa", f)
    assert len(rows) == 790
    counts = {
        "mc1 >= 3 distractors (the rule)": sum(1 for r in rows if _distractors(r["mc1_targets"]) >= 3),
        "mc1 exactly 4 choices": sum(1 for r in rows if len(r["mc1_targets"]["choices"]) == 4),
        "mc2 >= 4 choices": sum(1 for r in rows if len(r["mc2_targets"]["choices"]) >= 4),
        "mc2 >= 3 distractors": sum(1 for r in rows if _distractors(r["mc2_targets"]) >= 3),
    }
    assert counts == {
        "mc1 >= 3 distractors (the rule)": 664,
        "mc1 exactly 4 choices": 202,
        "mc2 >= 4 choices": 765,
        "mc2 >= 3 distractors": 664,
    }
    items = load_items("truthfulqa", 1000, files=f)
    assert len(items) == 659 and 3 * 1000 + len(items) == 3659
    # A data defect of this revision, kept because the committed grid (fixtures/real) depends on it:
    # the 4th selected item's third mc1 distractor is an empty string.
    assert items[3].item_id == "truthfulqa/d1ecea2052ba" and items[3].options[3] == ""
    assert sum(any(o == "" for o in it.options) for it in items) == 1


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
