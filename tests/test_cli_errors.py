"""A newcomer's common mistakes get one line naming the thing and the fix, an exit code, and no run
folder (cli/names.py, harness/plugin.py); Ctrl-C in any command is one line and exit 130 (cli/main.py)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import ROOT, run_cli, scripted_overrides

from memeval.cli import main as cli_main
from memeval.cli import run as cli_run
from memeval.cli.commands import COMMANDS, Command


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(("override", "message"), [
    ("method=gws", "error: unknown method 'gws'; did you mean 'gsw'? (memeval run --help lists methods: cognee, "),
    ("dataset=locomoo", "error: unknown dataset 'locomoo'; did you mean 'locomo'? (memeval run --help lists datasets: "),
    ("llm=gpt4", "error: unknown llm 'gpt4'; did you mean 'gpt4o'? (memeval run --help lists answering models: "),
    ("judge=loca", "error: unknown judge 'loca'; did you mean 'local'? (memeval run --help lists judges: "),
    ("embedder=voyag", "error: unknown embedder 'voyag'; did you mean 'voyage'? (memeval run --help lists embedders: "),
    ("method=vanilla,gws", "error: unknown method 'gws'; did you mean 'gsw'?"),  # a sweep: before any job
    ("+experiment=papr", "error: unknown experiment 'papr'; did you mean 'paper'?"),
])
def test_an_unknown_option_is_one_line_with_the_nearest_name(override: str, message: str, tmp_path: Path,
                                                             capsys) -> None:
    rc = cli_run.main([override, f"output_root={tmp_path / 'runs'}", "tracking=none"])
    line = _one_line(capsys.readouterr().err)
    assert rc == 2 and line.startswith(message), line
    assert not (tmp_path / "runs").exists()


def test_an_unknown_option_with_no_near_name_lists_the_options(capsys) -> None:
    assert cli_run.main(["method=zzzz"]) == 2
    line = _one_line(capsys.readouterr().err)
    assert "did you mean" not in line and line.startswith("error: unknown method 'zzzz' (") and "vanilla" in line


@pytest.mark.parametrize("override", ["+method.top_kk=3", "method.top_kk=3", "++method.top_kk=3"])
def test_an_unknown_method_parameter_lists_the_methods_parameters(override: str, scripted, tmp_path: Path,
                                                                  data_dir: Path) -> None:
    """Was a 33-line TypeError traceback (twice) and a stray run folder (`+`), or Hydra's advice
    to add the key with `+` (without it)."""
    r = run_cli(["method=embedding_rag", "dataset=epbench20", "subset.n=2", override,
                 *scripted_overrides(scripted, tmp_path, data_dir)])
    line = _one_line(r.stderr)
    assert r.returncode == 2 and line == (
        "error: method embedding_rag has no parameter 'top_kk'; its parameters: name, granularity, unit_scoring, "
        "top_k, paragraphs_per_unit_cap, order (did you mean top_k?)")
    assert not (tmp_path / "runs").exists() and scripted.count() == 0


def test_a_parameter_of_another_method_is_named_for_the_method_chosen(capsys) -> None:
    assert cli_run.main(["method=gsw_global", "+method.top_k=3"]) == 2  # an ablation's base (gsw) declares them
    line = _one_line(capsys.readouterr().err)
    assert line.startswith("error: method gsw_global has no parameter 'top_k'; its parameters: name, chunk_sentences")
    assert "(did you mean match_top_k?)" in line


def test_the_composed_method_config_is_checked_before_any_run_folder(tmp_path: Path) -> None:
    """A key the command line did not add (a user's own method config) is refused by build()."""
    from omegaconf import OmegaConf

    from memeval.harness.build import build
    from memeval.harness.estimate import compose
    from memeval.model_access.errors import ConfigError

    cfg = compose(["method=vanilla", f"output_root={tmp_path / 'runs'}", f"cache_path={tmp_path / 'c.sqlite'}"])
    OmegaConf.set_struct(cfg, False)
    cfg.method.windw_margin = 0.5
    with pytest.raises(ConfigError, match=r"method vanilla has no parameter 'windw_margin'; its parameters: name, "
                                          r"overflow, window_margin \(did you mean window_margin\?\)"):
        build(cfg, check=False)
    assert not (tmp_path / "runs").exists()


def test_estimate_names_an_unknown_method_in_one_line(capsys) -> None:
    rc = cli_main.main(["estimate", "method=gws", "dataset=epbench20"])
    line = _one_line(capsys.readouterr().err)
    assert rc == 2 and line.startswith("error: unknown method 'gws'; did you mean 'gsw'?")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_ctrl_c_in_every_command_is_one_line_and_exit_130(name: str, monkeypatch, capsys) -> None:
    def stopped(argv: list[str]) -> int:
        raise KeyboardInterrupt

    command = COMMANDS[name]
    monkeypatch.setitem(COMMANDS, name, Command(command.name, command.help, stopped, command.interrupted))
    assert cli_main.main([name]) == 130
    line = _one_line(capsys.readouterr().err)
    assert line.startswith(f"interrupted: memeval {name} stopped; ") and "rerun the same command" in line


def test_ctrl_c_inside_a_task_group_is_the_same_line(monkeypatch, capsys) -> None:
    def stopped(argv: list[str]) -> int:
        raise BaseExceptionGroup("stage", [KeyboardInterrupt()])

    monkeypatch.setitem(COMMANDS, "rescore", Command("rescore", "h", stopped, COMMANDS["rescore"].interrupted))
    assert cli_main.main(["rescore"]) == 130
    assert _one_line(capsys.readouterr().err).startswith("interrupted: memeval rescore stopped; ")


def test_a_real_sigint_leaves_no_traceback() -> None:
    """The signal itself, in a process of its own: a command busy when Ctrl-C arrives."""
    code = ("import sys, time\n"
            "from memeval.cli import main, commands\n"
            "def busy(argv):\n"
            "    print('ready', flush=True)\n"
            "    time.sleep(60)\n"
            "    return 0\n"
            "c = commands.COMMANDS['compare']\n"
            "commands.COMMANDS['compare'] = commands.Command(c.name, c.help, busy, c.interrupted)\n"
            "sys.exit(main.main(['compare']))\n")
    p = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    assert p.stdout is not None and p.stdout.readline().strip() == "ready"
    time.sleep(0.2)
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130
    assert _one_line(err) == ("interrupted: memeval compare stopped; it only reads run folders, so nothing in "
                              "them changed; rerun the same command.")
