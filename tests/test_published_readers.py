"""The readers of published LoCoMo answer sets (datasets/published): every row of every source is
placed on a LoCoMo question by the alignment rules, the source's own verdicts come through (its
published aggregate is recomputed from them), and a file whose rows do not align is refused with one
error that counts and shows them. Skipped where data/published is not on this machine."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from memeval.datasets.answers_file import read_answers
from memeval.datasets.published import AlignmentError, convert, reader_name
from memeval.datasets.published.align import LoCoMoQuestions

PUBLISHED = next((p for p in (Path(__file__).resolve().parents[2] / "shared" / "data" / "published",
                              Path("/work/shared/data/published")) if p.is_dir()), None)
needs_published = pytest.mark.skipif(PUBLISHED is None, reason="no data/published (shared data) on this machine")
SOURCES = {"evermemos": 1540, "fc-gpt41mini-cot": 1540, "fc-gpt41mini-memos": 1540, "fc-gpt4omini-cot": 1540,
           "fc-gpt4omini-memos": 1540, "zep": 1540, "memobase-0503": 1540, "memobase-0710": 1540,
           "cognee-1.6.5": 1986, "memu": 1542}


@pytest.fixture(scope="module")
def locomo(data_dir: Path) -> LoCoMoQuestions:
    if not (data_dir / "locomo" / "locomo10.json").exists():
        pytest.skip("no locomo10.json")
    return LoCoMoQuestions(data_dir)


@needs_published
@pytest.mark.parametrize("source", sorted(SOURCES))
def test_every_row_aligns_to_a_question_of_the_dataset(source: str, locomo: LoCoMoQuestions, tmp_path: Path) -> None:
    assert PUBLISHED is not None
    converted, sha = convert(source, PUBLISHED / source, "", tmp_path / "a.jsonl", data=locomo)
    ids = [r.question_id for r in converted.rows]
    assert len(ids) == SOURCES[source] and len(set(ids)) == len(ids)
    cat = {q.id: int(q.attrs["category"]) for q in locomo.dataset.questions}
    assert set(ids) <= set(cat)
    fours = {q for q, c in cat.items() if c != 5}
    if source == "cognee-1.6.5":
        assert set(ids) == set(cat)
    elif source == "memu":  # its 2 category-5 rows are the only ones with an `answer` field
        assert set(ids) - fours == {"conv-26-q167", "conv-26-q178"}
    else:
        assert set(ids) == fours
    back = read_answers(tmp_path / "a.jsonl")  # the written file reads back as written
    assert back.sha256 == sha and [r.question_id for r in back.rows] == ids
    assert back.header["data_version"] == locomo.version and back.header["dataset"] == "locomo"
    assert all(r.published_verdict is not None for r in back.rows)


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


@needs_published
def test_published_aggregates_are_recomputed_from_the_kept_verdicts(locomo: LoCoMoQuestions) -> None:
    """Each source's published score, from the verdicts as kept, by the header's aggregate rule."""
    assert PUBLISHED is not None

    def rows(source: str) -> list:
        return convert(source, PUBLISHED / source, "", data=locomo)[0].rows

    def mean_of_runs(source: str) -> float:
        v = [r.published_verdict for r in rows(source)]
        return _mean([_mean([float(x[i]) for x in v]) for i in range(3)])

    assert round(100 * mean_of_runs("evermemos"), 2) == 92.45
    assert round(100 * mean_of_runs("fc-gpt41mini-cot"), 2) == 92.62
    assert round(100 * mean_of_runs("fc-gpt4omini-memos"), 2) == 74.29
    assert round(100 * _mean([float(r.published_verdict) for r in rows("zep")]), 2) == 75.13
    assert round(100 * _mean([float(r.published_verdict) for r in rows("memobase-0503")]), 2) == 70.91
    assert round(100 * _mean([float(r.published_verdict) for r in rows("memobase-0710")]), 2) == 75.78
    assert sum(bool(r.published_verdict) for r in rows("memu")) == 1420
    excl = json.loads((PUBLISHED / "cognee-1.6.5" / "gold_exclusions.json").read_text())
    out = {f"{locomo.samples[e['conversation_index']]}-q{e['question_idx']}"
           for s in excl["sets"].values() for e in s["questions"]}
    cat = {q.id: int(q.attrs["category"]) for q in locomo.dataset.questions}
    kept = [float(r.published_verdict) for r in rows("cognee-1.6.5") if cat[r.question_id] != 3 and r.question_id not in out]
    assert len(kept) == 1762 and round(_mean(kept), 4) == 0.9069


@needs_published
def test_conv48_repeated_pairs_stay_apart(locomo: LoCoMoQuestions) -> None:
    """conv-48 repeats 11 question/gold pairs (qa 16/89, ...): position, not text, places each."""
    assert PUBLISHED is not None
    ids = [r.question_id for r in convert("zep", PUBLISHED / "zep", "", data=locomo)[0].rows]
    by = {q.id: q for q in locomo.dataset.questions}
    assert by["conv-48-q16"].text == by["conv-48-q89"].text and {"conv-48-q16", "conv-48-q89"} <= set(ids)


def _copy(source: str, tmp: Path) -> Path:
    assert PUBLISHED is not None
    dst = tmp / source
    shutil.copytree(PUBLISHED / source, dst)
    for p in dst.rglob("*"):
        p.chmod(0o644 if p.is_file() else 0o755)
    dst.chmod(0o755)
    return dst


@needs_published
def test_misaligned_rows_are_refused_with_one_counting_error(locomo: LoCoMoQuestions, tmp_path: Path) -> None:
    folder = _copy("evermemos", tmp_path)
    obj = json.loads((folder / "judged.json").read_text())
    rows = obj["locomo_exp_user_0"]
    rows[4], rows[5] = rows[5], rows[4]  # two rows out of order: both now sit on the wrong question
    obj["locomo_exp_user_1"].pop(0)  # a dropped row shifts the rest of conv-30 by one
    (folder / "judged.json").write_text(json.dumps(obj))
    with pytest.raises(AlignmentError) as err:
        convert("evermemos", folder, "", data=locomo)
    msg = str(err.value)
    assert " of 1539 rows of " in msg and "do not align with locomo10.json" in msg
    n = int(msg.split(" of ", 1)[0])
    assert n >= 2 + 70, msg  # the swapped pair and most of conv-30 after the dropped row
    assert "row 4 (locomo_exp_user_0 #4): conv-26-q4: " in msg and f"... and {n - 5} more" in msg


@needs_published
def test_fc_question_ids_must_match_their_group(locomo: LoCoMoQuestions, tmp_path: Path) -> None:
    folder = _copy("fc-gpt4omini-memos", tmp_path)
    obj = json.loads((folder / "eval_results.json").read_text())
    obj["detailed_results"]["locomo_exp_user_2"][0]["question_id"] = "locomo_3_qa0"
    (folder / "eval_results.json").write_text(json.dumps(obj))
    with pytest.raises(AlignmentError, match=r"^1 of 1540 rows .*'locomo_3_qa0' in locomo_exp_user_2"):
        convert("fc", folder, "", data=locomo)


@needs_published
def test_memu_renames_are_undone(locomo: LoCoMoQuestions) -> None:
    assert PUBLISHED is not None
    rows = {r.question_id: r for r in convert("memu", PUBLISHED / "memu", "", data=locomo)[0].rows}
    changed = [r for r in rows.values() if "published_answer" in r.extra]
    assert changed and all(r.question_id.startswith(("conv-43-", "conv-47-")) for r in changed)
    assert all("Juan" not in r.answer and "Jack" not in r.answer for r in changed)
    r = rows["conv-43-q0"]
    assert "Juan" in r.extra["published_answer"] and r.answer == r.extra["published_answer"].replace("Juan", "John")


def test_reader_names() -> None:
    assert reader_name("fc-gpt41mini-cot") == "fc" and reader_name("cognee-1.6.5") == "cognee"
    with pytest.raises(Exception, match="no reader for published source 'mem0'"):
        reader_name("mem0")
