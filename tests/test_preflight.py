"""A run names the models that actually ran, and refuses to start, in one line, when a model
setting is missing or an endpoint cannot serve (harness/schema.py check_model_settings,
model_access/preflight.py). No run folder is written for a run that never started."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import run_cli, scripted_overrides

from memeval.model_access.preflight import (
    Endpoint,
    EndpointError,
    Reply,
    endpoint_of,
    list_models,
    preflight,
)


def _without(overrides: list[str], *keys: str) -> list[str]:
    return [o for o in overrides if o.split("=", 1)[0] not in keys]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _one_line_refusal(proc, tmp_path: Path, expected: str) -> None:
    assert proc.stderr.strip() == expected, proc.stderr[-3000:]
    assert proc.returncode == 2
    assert not (tmp_path / "runs").exists(), "a run that never started left a run folder"


MISSING_MODEL = ("{g}.model is not set: an OpenAI-compatible endpoint needs the model name it serves, "
                 "e.g. {g}.model={example} (the server's GET /v1/models lists them)")


@pytest.mark.parametrize(("group", "example", "extra"), [
    ("llm", "Qwen/Qwen2.5-7B-Instruct", []),
    ("judge", "Qwen/Qwen2.5-7B-Instruct", []),
    ("embedder", "BAAI/bge-small-en-v1.5", []),
    ("llm_index", "Qwen/Qwen2.5-7B-Instruct", ["llm_index=openai_compatible", "llm_index.base_url={url}"]),
    ("judge", "Qwen/Qwen2.5-7B-Instruct", ["stages=[estimate]"]),
])
def test_an_openai_compatible_model_without_its_name_is_refused(tmp_path, scripted, data_dir, group, example,
                                                                extra) -> None:
    """It used to run as GPT-4o: priced as GPT-4o and named so in every table, without the caveat."""
    base = _without(scripted_overrides(scripted, tmp_path, data_dir), f"{group}.model")
    proc = run_cli([*base, "method=vanilla", "subset.n=2", *(e.format(url=scripted.base_url) for e in extra)])
    _one_line_refusal(proc, tmp_path, "error: " + MISSING_MODEL.format(g=group, example=example))
    assert scripted.count() == 0


def test_an_openai_compatible_model_without_its_address_is_refused(tmp_path, scripted, data_dir) -> None:
    base = _without(scripted_overrides(scripted, tmp_path, data_dir), "judge.base_url")
    proc = run_cli([*base, "method=vanilla", "subset.n=2"])
    _one_line_refusal(proc, tmp_path, "error: judge.base_url is not set: an OpenAI-compatible endpoint needs its "
                      "address, e.g. judge.base_url=http://localhost:8000/v1")


def test_an_unreachable_endpoint_fails_in_one_line_before_the_run_folder(tmp_path, scripted, data_dir) -> None:
    dead = f"http://127.0.0.1:{_closed_port()}/v1"
    base = _without(scripted_overrides(scripted, tmp_path, data_dir), "llm.base_url")
    proc = run_cli([*base, f"llm.base_url={dead}", "method=vanilla", "subset.n=2"])
    _one_line_refusal(proc, tmp_path, f"error: cannot reach the answering model's endpoint {dead} (connection "
                      "refused): start the server or fix llm.base_url (a rerun answered wholly from the cache "
                      "needs no server: MEMEVAL_PREFLIGHT=off)")
    assert scripted.count() == 0


def test_a_model_the_endpoint_does_not_serve_is_named(tmp_path, scripted, data_dir) -> None:
    scripted.models = ["scripted-judge", "hashed-bow"]
    proc = run_cli([*scripted_overrides(scripted, tmp_path, data_dir), "method=vanilla", "subset.n=2"])
    _one_line_refusal(proc, tmp_path, f"error: the answering model's endpoint {scripted.base_url} does not serve "
                      "scripted-llm (it serves: scripted-judge, hashed-bow): fix llm.model")
    assert scripted.model_lists == 1 and scripted.count() == 0


def test_a_run_is_named_priced_and_caveated_as_the_model_that_ran(tmp_path, scripted, data_dir) -> None:
    scripted.models = ["scripted-llm", "scripted-judge", "hashed-bow"]
    proc = run_cli([*scripted_overrides(scripted, tmp_path, data_dir), "method=vanilla", "subset.n=2"])
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert scripted.model_lists == 1  # one look per distinct endpoint, however many models it serves
    run = next((tmp_path / "runs" / "epbench20").glob("vanilla-*"))
    meta = json.loads((run / "meta.json").read_text())
    assert (meta["answer_model"], meta["judge_model"]) == ("scripted-llm", "scripted-judge")
    results = (run / "results.md").read_text()
    assert "answering model: **scripted-llm**; judge: **scripted-judge**" in results
    assert "NOTE: not GPT-4o answering" in results
    usage = json.loads((run / "usage.json").read_text())
    assert "scripted-llm" in usage["unpriced_models"] and "gpt-4o-2024-08-06" not in json.dumps(usage)


# -- the preflight itself, without a run ------------------------------------------------------

def _ep(role: str, key: str, url: str = "http://h:1/v1", model: str = "m", env: str | None = None) -> Endpoint:
    return Endpoint(role, key, url, model, env)


def test_one_request_per_endpoint_and_each_role_named() -> None:
    asked: list[str] = []

    def get(url: str, key: str | None, timeout_s: float) -> Reply:
        asked.append(url)
        return Reply(200, ["a"]) if "one" in url else Reply(200, ["x"])

    with pytest.raises(EndpointError) as err:
        preflight([_ep("answering model", "llm", "http://one/v1", "a"), _ep("judge", "judge", "http://one/v1", "b"),
                   _ep("embedder", "embedder", "http://two/v1", "e")], get=get)
    assert asked == ["http://one/v1", "http://two/v1"]
    assert str(err.value) == ("the judge's endpoint http://one/v1 does not serve b (it serves: a): fix judge.model; "
                              "the embedder's endpoint http://two/v1 does not serve e (it serves: x): fix embedder.model")


def test_a_refused_key_names_its_variable(monkeypatch) -> None:
    monkeypatch.setenv("MY_KEY", "sk-wrong")
    seen: list[str | None] = []

    def get(url: str, key: str | None, timeout_s: float) -> Reply:
        seen.append(key)
        return Reply(401)

    with pytest.raises(EndpointError, match=r"^the judge's endpoint http://h:1/v1 refused the request \(HTTP 401\): "
                       r"check the key in MY_KEY$"):
        preflight([_ep("judge", "judge", env="MY_KEY")], get=get)
    assert seen == ["sk-wrong"]


@pytest.mark.parametrize("reply", [Reply(404), Reply(200), Reply(200, ["model.gguf"], lists_any_name=True)])
def test_a_server_without_a_listing_or_answering_any_name_passes(reply: Reply) -> None:
    preflight([_ep("answering model", "llm", model="Qwen/Qwen2.5-7B-Instruct")], get=lambda *a: reply)


def test_local_servers_in_process_models_and_never_called_endpoints_are_not_checked() -> None:
    local = SimpleNamespace(server=object(), base_url=None, model="qwen")
    in_process = SimpleNamespace(model="all-minilm-l6-v2")
    imported = SimpleNamespace(server=None, base_url="http://imported-answers.invalid/v1", model="x", api_key_env=None)
    remote = SimpleNamespace(server=None, base_url=None, model="gpt-4o-2024-08-06", api_key_env="OPENAI_API_KEY")
    assert [endpoint_of("r", "k", c) for c in (local, in_process, imported)] == [None, None, None]
    openai = endpoint_of("answering model", "llm", remote)
    assert openai is not None and openai.default_url and openai.base_url.startswith("https://")


def test_the_listing_is_read_from_a_real_server(scripted) -> None:
    scripted.models = ["a", "b"]
    assert list_models(scripted.base_url, None).models == ["a", "b"]
    scripted.models = None
    assert list_models(scripted.base_url, None) == Reply(404)


def test_the_check_can_be_switched_off_for_a_rerun_from_the_cache(monkeypatch) -> None:
    """Offline, a rerun whose every call is cached must not be refused for a server it will not call."""
    def unreachable(url: str, key: str | None, timeout_s: float) -> Reply:
        raise ConnectionRefusedError(111, "Connection refused")

    endpoints = [_ep("answering model", "llm", "http://127.0.0.1:9/v1", "a")]
    with pytest.raises(EndpointError, match="MEMEVAL_PREFLIGHT=off"):
        preflight(endpoints, get=unreachable)
    monkeypatch.setenv("MEMEVAL_PREFLIGHT", "off")
    preflight(endpoints, get=unreachable)  # no request, no error
