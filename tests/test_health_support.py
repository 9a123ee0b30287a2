"""The support and speaker checks (evaluation/health/support.py, speakers.py, support_text.py)."""

from __future__ import annotations

from types import SimpleNamespace

from memeval.evaluation.health.speakers import Turns, speaker_swaps_check, swap
from memeval.evaluation.health.stored import Claim
from memeval.evaluation.health.support import context_support_check, index_support_check
from memeval.evaluation.health.support_calibration import score_labels
from memeval.evaluation.health.support_text import Source, unsupported_share

TH = {"claim_share": 0.2, "min_content": 2, "date_window": 7, "warn": 0.05, "fail": 0.2, "frame_share": 0.9}
SOURCE_TEXT = ("Marla opened a small bakery on the harbour road on 27 May 2023. She bakes rye loaves "
               "every morning and sells them to the fishermen.")


def _corpus(*texts: str, timestamps: tuple[str, ...] = ()) -> SimpleNamespace:
    units = [SimpleNamespace(id=str(i + 1), text=t, title=None,
                             timestamp=timestamps[i] if i < len(timestamps) else None) for i, t in enumerate(texts)]
    return SimpleNamespace(units=units)


def test_verbatim_sentence_is_supported() -> None:
    share, missing = unsupported_share("She bakes rye loaves every morning and sells them to the fishermen.",
                                       Source([SOURCE_TEXT]))
    assert share == 0.0 and missing == []


def test_invented_word_number_and_date_are_unsupported() -> None:
    src = Source([SOURCE_TEXT])
    word, missing = unsupported_share("Marla closed the bakery.", src)
    assert word is not None and word > TH["claim_share"] and "closed" in missing
    number, missing = unsupported_share("Marla bakes 40 loaves", src)
    assert number is not None and number > TH["claim_share"] and "40" in missing
    hours, missing = unsupported_share("The bakery is open from 9 am to 5 pm", src)
    assert hours is not None and hours > TH["claim_share"] and "9:00am" in missing
    far, missing = unsupported_share("Marla opened a bakery on 3 March 2021", src)
    assert far is not None and far > 0 and missing == ["2021-03-03"]


def test_stemmed_variants_are_supported() -> None:
    share, _ = unsupported_share("Marla was baking loaves and selling them in the mornings", Source([SOURCE_TEXT]))
    assert share == 0.0


def test_a_date_written_another_way_is_the_same_day() -> None:
    src = Source([SOURCE_TEXT])
    assert unsupported_share("Marla opened the bakery on May 27, 2023", src) == (0.0, [])
    # within the window: "yesterday" written as a date is not an invention
    assert unsupported_share("Marla opened the bakery on 26 May 2023", src)[0] == 0.0
    assert unsupported_share("Marla opened the bakery on 27 June 2023", src)[0] > 0


def test_context_check_flags_the_invention_and_not_the_source() -> None:
    ds = SimpleNamespace(corpora={"c": _corpus(SOURCE_TEXT)})
    source_ctx = {"question_id": "q1", "corpus_id": "c", "context_text": SOURCE_TEXT}
    invented = {"question_id": "q2", "corpus_id": "c",
                "context_text": SOURCE_TEXT + "\nMarla died on 27 May, 2023 in a storm."}
    ok = context_support_check([source_ctx], ds, (), (), TH)
    assert ok.value == 0.0 and ok.status == "ok"
    bad = context_support_check([source_ctx, invented], ds, (), (), TH)
    assert bad.value == round((0 + 1 / 3) / 2, 4) and bad.status == "warn" and set(bad.questions) == {"q2"}
    assert "died" in bad.questions["q2"]
    # the sentence itself, «quoted», is what the explorer marks in the context
    assert "«Marla died on 27 May, 2023 in a storm.»" in bad.questions["q2"]


def test_index_check_reads_provenance_units() -> None:
    ds = SimpleNamespace(corpora={"c": _corpus(SOURCE_TEXT, "Tomas repairs fishing nets in the shed.")})
    # the claim's words are in unit 2, not in unit 1 its provenance names
    claims = {"c": [Claim("Tomas repairs fishing nets", ("1",), "x"), Claim("Marla bakes rye loaves", ("1",), "x")]}
    check = index_support_check(claims, ds, TH)
    assert check.value == 0.5
    whole = index_support_check({"c": [Claim("Tomas repairs fishing nets", None, "x")]}, ds, TH)
    assert whole.value == 0.0


CONVERSATION = ("Rosa: I started a pottery class at the community centre last week.\n\n"
                "Ivo: That sounds fun! I have been fixing my old sailboat all month.\n\n"
                "Rosa: Good luck with the sailboat repairs.\n\nIvo: Thanks!")


def test_speaker_swap_detected() -> None:
    turns = Turns(_corpus(CONVERSATION))
    assert turns.speakers == {"rosa", "ivo"}
    assert swap(Claim("Ivo started a pottery class at the community centre", None, "x"), turns, 2)[1]
    assert swap(Claim("Rosa started a pottery class at the community centre", None, "x"), turns, 2) == (True, None)
    merged = swap(Claim("Rosa and Ivo started a pottery class at the community centre", None, "x"), turns, 2)
    assert merged[1] and "merges" in merged[1]
    ds = SimpleNamespace(corpora={"c": _corpus(CONVERSATION)})
    check = speaker_swaps_check({"c": [Claim("Ivo started a pottery class", None, "x"),
                                       Claim("Ivo is fixing his old sailboat", None, "x")]}, ds, TH)
    assert check.value == 0.5


def test_calibration_scores_labels() -> None:
    corpora = {("d", "c"): _corpus(SOURCE_TEXT)}
    labels = [{"dataset": "d", "corpus_id": "c", "source_units": None, "claim": c, "label": lab}
              for c, lab in (("Marla bakes rye loaves", "supported"), ("Marla sells bread to the fishermen", "supported"),
                             ("Marla died in a storm", "unsupported"), ("Marla owns three cats", "unsupported"))]
    labels.append({"dataset": "d", "corpus_id": "other", "source_units": None, "claim": "x y", "label": "supported"})
    [fig] = score_labels(labels, corpora, TH, [0.2])
    assert (fig.tp, fig.fp, fig.fn, fig.tn, fig.skipped) == (2, 1, 0, 1, 1)  # "bread" is not the source's word
    assert fig.precision == 2 / 3 and fig.recall == 1.0


ECHO = ("Rosa: My online bakery shop is open at last!\n\n"
        "Ivo: Congrats! What made you start the online bakery shop?\n\n"
        "Rosa: We planned the garden party together.\n\n"
        "Ivo: Yes, the garden party was lovely.")


def test_a_merged_claim_is_caught_when_the_other_speaker_only_echoes_the_topic() -> None:
    """Ivo repeats Rosa's words in the second person: the shop is Rosa's alone; "we" is both's."""
    turns = Turns(_corpus(ECHO))
    merged = swap(Claim("Rosa and Ivo started their online bakery shop", None, "x"), turns, 2)
    assert merged[1] and "only rosa says it of self" in merged[1]
    assert swap(Claim("Rosa and Ivo planned the garden party", None, "x"), turns, 2) == (True, None)
    assert swap(Claim("Rosa opened her online bakery shop", None, "x"), turns, 2) == (True, None)
    assert swap(Claim("Rosa and Ivo discussed the online bakery shop", None, "x"), turns, 2) == (True, None)
