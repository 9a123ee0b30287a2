"""The card's shared constraints: the 17-chapter cap by config, and every table stating it."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from memeval.datasets.epbench import BOOK2000

ROOT = Path(__file__).resolve().parents[1]


def _compose(overrides: list[str]):
    from hydra import compose, initialize_config_dir

    from memeval.harness.resolvers import register_resolvers
    from memeval.harness.schema import register_schemas

    register_resolvers()
    register_schemas()
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        return compose(config_name="config", overrides=overrides)


def _fake_2000_book(root: Path, max_chapters: int = 138) -> None:
    """A tiny stand-in with the official layout whose questions span up to `max_chapters` chapters."""
    folder = root / BOOK2000
    folder.mkdir(parents=True)
    chapters = "\n\n".join(f"Chapter {i}\n\nEvent text of chapter {i}." for i in range(1, 201))
    (folder / "book.json").write_text(json.dumps(chapters))
    rows = [{"q_idx": i, "debug_level_2": 0, "question": f"Question {i}?", "cue": "c", "cue_completed": "c",
             "retrieval_type": "Times", "get": "all", "correct_answer": ["x"],
             "correct_answer_chapters": list(range(1, n + 1)), "n_chapters_correct_answer": n}
            for i, n in enumerate((1, 2, max_chapters))]
    pd.DataFrame(rows).to_parquet(folder / "df_qa.parquet")


@pytest.mark.parametrize("dataset", ["epbench200", "epbench2000"])
def test_200_and_2000_books_cap_at_17_by_config(dataset: str) -> None:
    cfg = _compose([f"dataset={dataset}"])
    assert cfg.dataset.loader.context_cap == 17


def test_2000_book_cap_is_17_not_its_data_maximum(tmp_path: Path) -> None:
    from hydra.utils import instantiate

    _fake_2000_book(tmp_path, max_chapters=138)
    cfg = _compose(["dataset=epbench2000", f"data_dir={tmp_path}"])
    data = instantiate(cfg.dataset.loader).load()
    assert data.natural_cap.max_units == 17
    assert data.natural_cap.describe() == "17 units (dataset config; data maximum 138)"


def test_20_chapter_book_cap_is_its_data_maximum(data_dir: Path) -> None:
    from hydra.utils import instantiate

    cfg = _compose(["dataset=epbench20", f"data_dir={data_dir}"])
    data = instantiate(cfg.dataset.loader).load()
    assert data.natural_cap.max_units == 3 and data.natural_cap.describe() == "3 units (data maximum)"


def test_every_protocol_table_states_the_cap() -> None:
    from memeval.evaluation.protocol import provenance_header

    header = provenance_header({"context_cap": "17 units (dataset config; data maximum 138)"}, "lenient")
    assert "context cap: 17 units (dataset config; data maximum 138)" in header
