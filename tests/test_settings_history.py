"""A class's own `settings_history` is what the upgrade layer reads (memeval/settings_history.py):
a third party's method or protocol gets the same treatment as a built-in one, and the upgrade
module names none of them."""

from __future__ import annotations

import inspect
from typing import Any, ClassVar

import pytest

from memeval import plugins
from memeval.evaluation.runs.upgrade import (
    RUN_FORMAT,
    index_identity_view,
    upgrade_config,
    upgrade_meta,
    upgrade_protocol_description,
)
from memeval.settings_history import HashedAsAbsent, Introduced, Record


class Knotted:
    """A third party's method (no memeval base needed here): three settings it gained after runs
    were saved, and an index parameter that joined its index identity later."""

    settings_history: ClassVar[tuple[Record, ...]] = (
        Introduced("knots", 3),  # every config from format 1 on has it
        Introduced("twine", "hemp", until_format=2, hashed_as_absent=True),
        Introduced("loops", False, until_format=None),  # after the last format change
        HashedAsAbsent("splice", None),
    )


class QuizHistory:
    """A third party's protocol: its config key and its description's missing key."""

    name = "quiz_history"
    settings_history: ClassVar[tuple[Record, ...]] = (Introduced("rubric", 1, until_format=None),)

    @classmethod
    def upgrade_description(cls, desc: dict[str, Any], run_format: int) -> dict[str, Any]:
        return {**desc, "rubric": desc.get("rubric", 1)} if run_format < 2 else dict(desc)


KNOTTED, QUIZ = f"{__name__}.Knotted", f"{__name__}.QuizHistory"


def _method(fmt: int | None, **settings: Any) -> dict[str, Any]:
    cfg: dict[str, Any] = {"method": {"_target_": KNOTTED, **settings}}
    return cfg if fmt is None else {**cfg, "run_format": fmt}


def test_a_third_party_methods_history_fills_an_older_config() -> None:
    old = upgrade_config(_method(None)).method  # format 0: every setting predates it
    assert (old.knots, old.twine, old.loops) == (3, "hemp", False)
    one = upgrade_config(_method(1)).method
    assert "knots" not in one and one.twine == "hemp" and one.loops is False
    two = upgrade_config(_method(2)).method
    assert "knots" not in two and "twine" not in two and two.loops is False
    assert "splice" not in upgrade_config(_method(0)).method  # an identity record, not a config key
    kept = upgrade_config(_method(0, knots=9, twine="jute", loops=True)).method
    assert (kept.knots, kept.twine, kept.loops) == (9, "jute", True)  # a saved value is never replaced


def test_a_third_party_protocols_history_fills_its_node() -> None:
    cfg = {"dataset": {"protocol": {"_target_": QUIZ}}, "run_format": RUN_FORMAT}
    assert upgrade_config(cfg).dataset.protocol.rubric == 1
    assert upgrade_config({**cfg, "dataset": {"protocol": {"_target_": QUIZ, "rubric": 2}}}).dataset.protocol.rubric == 2


def test_a_third_party_methods_index_parameters_hash_as_absent_at_their_old_value() -> None:
    params = {"twine": "hemp", "splice": None, "knots": 3, "loops": False}
    assert index_identity_view(KNOTTED, params) == {"knots": 3, "loops": False}
    new = {"twine": "jute", "splice": 4}
    assert index_identity_view(KNOTTED, new) == new  # any other value is hashed


def test_a_class_not_installed_here_reads_as_saved() -> None:
    cfg = {"method": {"_target_": "no_such_plugin.method.Gone", "knots": 1}, "run_format": 0}
    assert dict(upgrade_config(cfg).method) == cfg["method"]
    assert index_identity_view("no_such_plugin.method.Gone", {"twine": "hemp"}) == {"twine": "hemp"}


def test_a_registered_protocol_completes_its_own_descriptions(monkeypatch: pytest.MonkeyPatch) -> None:
    registered = plugins.registered("protocol")
    quiz = plugins.Plugin("protocol", "quiz_history", f"{__name__}:QuizHistory", "a-third-party")
    monkeypatch.setattr(plugins, "registered", lambda kind: {**registered, "quiz_history": quiz})
    assert upgrade_protocol_description({"protocol": "quiz_history"}, 0) == {"protocol": "quiz_history", "rubric": 1}
    assert upgrade_protocol_description({"protocol": "quiz_history"}, 2) == {"protocol": "quiz_history"}
    meta = upgrade_meta({"run_format": 1, "protocol": {"protocol": "quiz_history"}})
    assert meta["protocol"]["rubric"] == 1


@pytest.mark.parametrize("kind", ["method", "protocol"])
def test_every_registered_history_names_its_classs_own_parameters(kind: str) -> None:
    """A misspelt key would fill a setting nothing reads (and a saved run would replay wrong)."""
    for name, cls in plugins.load_all(kind).items():
        history = cls.settings_history
        assert all(isinstance(r, Introduced | HashedAsAbsent) for r in history), name
        params = inspect.signature(cls.__init__).parameters
        for r in history:
            assert not isinstance(r, Introduced) or r.key in params, f"{name}: {r.key} is not a parameter"
            assert not isinstance(r, Introduced) or r.until_format is None or r.until_format <= RUN_FORMAT, name
