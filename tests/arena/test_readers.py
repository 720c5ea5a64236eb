"""Readers of the aggregate inputs: round trips through their written forms (hypothesis),
and hostile inputs that must be one clear error."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leaderboard_audit.arena.data import ArenaInputError, counts_document, counts_from_obj, read_battles
from leaderboard_audit.arena.formats import sniff
from leaderboard_audit.arena.table import read_table, table_document, table_from_document

# names the records' name policy accepts (no control, format or separator characters: C10)
names = st.text(
    st.characters(
        min_codepoint=33,
        max_codepoint=0x2FF,
        exclude_characters=",\"'\\",
        exclude_categories=("Cc", "Cf", "Zs", "Zl", "Zp"),
    ),
    min_size=1,
    max_size=12,
).filter(lambda s: s == s.strip())  # the readers strip names


@st.composite
def count_docs(draw):
    models = draw(st.lists(names, min_size=2, max_size=6, unique=True))
    M = len(models)
    pairs = draw(
        st.lists(
            st.tuples(st.integers(0, M - 1), st.integers(0, M - 1)).filter(lambda p: p[0] != p[1]),
            min_size=1,
            max_size=12,
        )
    )
    ys = draw(st.lists(st.lists(st.integers(0, 50), min_size=4, max_size=4), min_size=len(pairs), max_size=len(pairs)))
    return {"models": models, "X": [list(p) for p in pairs], "Y": ys}


@settings(max_examples=60, deadline=None)
@given(count_docs())
def test_counts_round_trip(doc):
    played = {doc["models"][m] for (a, b), y in zip(doc["X"], doc["Y"]) if sum(y) for m in (a, b)}
    if len(played) < 2:
        with pytest.raises(ArenaInputError, match="fewer than two models played"):
            counts_from_obj(doc, "doc")
        return
    pc = counts_from_obj(doc, "doc")
    assert set(pc.models) == played  # a model without battles is left out
    again = counts_from_obj(json.loads(json.dumps(counts_document(pc))), "again")
    assert again.models == pc.models and np.array_equal(again.counts, pc.counts)
    # every battle is kept, each pair once, from the lower index's side
    assert pc.n_battles == sum(sum(y) for y in doc["Y"])
    assert len(set(zip(pc.i.tolist(), pc.j.tolist()))) == len(pc.i) and (pc.i < pc.j).all()
    wins = dict.fromkeys(doc["models"], 0)
    for (a, b), y in zip(doc["X"], doc["Y"]):
        wins[doc["models"][a]] += y[0]
        wins[doc["models"][b]] += y[1]
    got = np.bincount(pc.i, pc.counts[:, 0], len(pc.models)) + np.bincount(pc.j, pc.counts[:, 1], len(pc.models))
    assert got.tolist() == [wins[m] for m in pc.models]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(names, min_size=2, max_size=8, unique=True),
    st.integers(1, 3),
    st.data(),
)
def test_table_round_trip(models, k, data):
    scores = data.draw(
        st.lists(
            st.lists(st.floats(0, 100, allow_nan=False), min_size=k, max_size=k),
            min_size=len(models),
            max_size=len(models),
        )
    )
    configs = [f"judge_{c}" for c in range(k)]
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(["model", *configs, "judge_0_se"])
    for m, row in zip(models, scores):
        w.writerow([m, *[repr(v) for v in row], "0.5"])
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "t.csv"
        p.write_text(buf.getvalue(), encoding="utf-8")
        assert sniff(p) == "score-table"
        t = read_table(p)
    assert list(t.models) == models and list(t.configs) == configs
    assert np.array_equal(t.scores, np.array(scores))
    assert t.se is not None and (t.se[:, 0] == 0.5).all() and np.isnan(t.se[:, 1:]).all()
    again = table_from_document(json.dumps(table_document(t)).encode(), "doc")
    assert again.models == t.models and np.array_equal(again.scores, t.scores)


@pytest.mark.parametrize(
    "content, message",
    [
        ("[1, 2]", "battle 0 is not an object"),
        ('[{"model_a": "x", "model_b": "x", "winner": "tie"}]', "two different model names"),
        ('[{"model_a": "x", "model_b": "y", "winner": "tie", "tstamp": "noon"}]', "'tstamp' is 'noon'"),
        (
            '[{"model_a": "x", "model_b": "y", "winner": "tie", "tstamp": 1}, {"model_a": "x", "model_b": "y", "winner": "tie"}]',
            "give every battle one, or none",
        ),
        ('[{"model_a": "x", "model_b": "y", "winner": "tie", "anony": false}]', "no battles left"),
        ('{"a": 1, "a": 2}', "duplicate key"),
        ("[{", "line 1 column 3: not JSON"),
    ],
)
def test_battle_file_errors(tmp_path, content, message):
    p = tmp_path / "clean_battle.json"
    p.write_text(content)
    with pytest.raises(ArenaInputError, match=str(p)) as e:
        read_battles(p)
    assert message in str(e.value)


def test_a_fifo_is_refused_not_waited_on(tmp_path):
    import os

    p = tmp_path / "fifo.json"
    os.mkfifo(p)
    with pytest.raises(ArenaInputError, match="fifo.json"):
        read_battles(p)


def test_a_model_without_battles_is_left_out_not_ranked_first():
    from leaderboard_audit.arena.audit import audit_arena

    doc = {
        "models": ["idle", "a", "b", "c"],
        "X": [[1, 2], [2, 3], [1, 3], [0, 1]],
        "Y": [[30, 10, 0, 0], [30, 10, 0, 0], [35, 5, 0, 0], [0, 0, 0, 0]],
    }
    pc = counts_from_obj(doc, "doc")
    assert pc.models == ("a", "b", "c") and any("without battles" in n for n in pc.notes)
    rep = audit_arena(pc, n_boot=20, n_shuffles=1)
    assert "idle" not in rep["models"]
    assert all(ms == ["a"] for ms in rep["champions"].values())


def test_a_nan_score_is_refused(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text("model,judge_a\nx,0.5\ny,nan\n")
    with pytest.raises(ArenaInputError, match=r"t.csv: line 3: model 'y' has 'judge_a' = 'nan'"):
        read_table(p)
