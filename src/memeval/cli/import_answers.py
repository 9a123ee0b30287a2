"""`memeval import-answers FILE [HYDRA OVERRIDES]`: answers made elsewhere become an ordinary run folder.

FILE is an answers file (docs/IMPORTED_ANSWERS.md). The run is the one `memeval run` would make with
`method=imported llm=imported` and the file's settings (methods/imported.py): the index and answer
stages call no model; the judge and score stages then run as for any method, with the configured
judge (`stages=[index,answer]` stops before them). The file is checked against the dataset before
anything is built: wrong dataset or data version, unknown ids, duplicated ids, and (when the run's
questions are chosen with subset.* or the loader's filters) missing ids each give one error.
Without such a choice the run takes exactly the file's questions.

`--from SOURCE DIR --out OUT.jsonl` first converts a published LoCoMo answer set
(datasets/published: evermemos, fc, zep, memobase, cognee, memu) into OUT.jsonl, aligned with
locomo10.json, then imports it; `--convert-only` stops after writing it.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from memeval.paths import CONF

LOADER_FILTERS = ("categories", "conversations")  # loader arguments that select questions (LoCoMo's)
SELECTING = ("subset.", *(f"dataset.loader.{k}" for k in LOADER_FILTERS))


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="memeval import-answers", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file", nargs="?", help="the answers file (JSON Lines; header first)")
    ap.add_argument("--from", dest="source", nargs=2, metavar=("SOURCE", "DIR"),
                    help="convert a published answer set (datasets/published: e.g. evermemos DIR) into --out first")
    ap.add_argument("--out", help="where --from writes the answers file (not inside the repository: licences)")
    ap.add_argument("--convert-only", action="store_true", help="with --from: write --out and stop")
    ap.add_argument("--verdicts", choices=("judge", "published"), default="judge",
                    help="judge: the configured judge decides (default); published: each answer's own published "
                         "verdict, grounded as a judge's is, with no judge call (where the protocol reads them; the header names the judge)")
    return ap


def verdict_overrides(answers: Any, verdicts: str, overrides: list[str]) -> list[str]:
    """The overrides that make the judge stage read the published verdicts (no model call): the
    header's judge named as the run's judge, grounded credit as the headline (a source's judge and
    the grounding check must both credit an answer). An error before anything is built when the
    file carries no verdicts or the dataset's protocol cannot read them."""
    from memeval.model_access.errors import ConfigError

    if verdicts == "judge":
        return []
    judge = answers.header.get("judge") or {}
    if not judge.get("model"):
        raise ConfigError(f"--verdicts published: {answers.path} names no judge in its header ('judge': "
                          "{\"model\": ...}); import with the default --verdicts judge")
    missing = [r.question_id for r in answers.rows if r.published_verdict is None]
    if missing:
        raise ConfigError(f"--verdicts published: {len(missing)} of {len(answers.rows)} answers carry no "
                          f"published_verdict (first: {', '.join(missing[:3])})")
    dataset = next((o.split("=", 1)[1] for o in overrides if _key(o) == "dataset"), answers.header.get("dataset"))
    if not _reads_published_verdicts(str(dataset)):
        raise ConfigError(f"--verdicts published: the protocol of dataset {dataset!r} reads no published verdicts "
                          "(its class takes no `verdicts`): import with the default --verdicts judge")
    return ["judge=published", "+dataset.protocol.verdicts=published", "dataset.protocol.credit=grounded"]


def _reads_published_verdicts(dataset: str) -> bool:
    """Whether conf/dataset/DATASET.yaml's protocol class takes `verdicts` (reads a source's own)."""
    import inspect

    import yaml
    from hydra.utils import get_class

    path = CONF / "dataset" / f"{dataset}.yaml"
    if not path.is_file():
        return False
    target = ((yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("protocol") or {}).get("_target_")
    # the class's call signature: what Hydra's instantiate passes the protocol's settings to
    return bool(target) and "verdicts" in inspect.signature(get_class(str(target))).parameters


def _key(override: str) -> str:
    return override.split("=", 1)[0].lstrip("+~")


def _escape(obj: Any) -> Any:
    """Header text kept literally in the config: OmegaConf would read '${' as an interpolation."""
    if isinstance(obj, str):
        return obj.replace("${", "\\${")
    if isinstance(obj, dict):
        return {k: _escape(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_escape(v) for v in obj]
    return obj


def compose_run(answers: Any, overrides: list[str]) -> Any:
    """The run's config: method=imported, llm=imported named after the file's answering model,
    the dataset the header names unless dataset=... is given, then the user's overrides."""
    from omegaconf import open_dict

    from memeval.harness.estimate import compose

    conf = CONF / "dataset"
    keys = {_key(o) for o in overrides}
    base = ["method=imported", "llm=imported"]
    if "dataset" not in keys and (conf / f"{answers.header['dataset']}.yaml").exists():
        base.append(f"dataset={answers.header['dataset']}")
    cfg = compose([*base, *overrides])
    header = answers.header
    with open_dict(cfg):
        cfg.llm.model = str(header["answering_model"])
        cfg.method.answers_file = str(answers.path.resolve())
        cfg.method.answers_sha256 = answers.sha256
        if "method.name" not in keys:
            cfg.method.name = answers.name
        cfg.method.imported = _escape({k: v for k, v in header.items() if k != "format"} | {"rows": len(answers.rows)})
    return cfg


def select_questions(cfg: Any, answers: Any, overrides: list[str]) -> int:
    """Check the file against the dataset and fix the run's questions; returns how many of the
    file's answers the run leaves out (questions it did not select). One error before any model."""
    from hydra.utils import instantiate
    from omegaconf import open_dict

    from memeval.datasets.answers_file import check_coverage, check_dataset
    from memeval.harness.build import build
    from memeval.harness.config_data import as_dict

    loader = as_dict(cfg.dataset.loader, resolve=True, what="dataset.loader")
    for key in LOADER_FILTERS:  # ids are known to the dataset whatever the run selects of it
        if key in loader:
            loader[key] = None
    dataset = instantiate(loader).load()
    ids = [q.id for q in dataset.questions]
    check_dataset(answers, dataset.name, dataset.version, ids, dataset.notes)
    keys = {_key(o) for o in overrides}
    with open_dict(cfg):
        if "subset.n" not in keys:  # not the run default's small draw: every question selected
            cfg.subset.n = None
        if not any(k.startswith(SELECTING) for k in keys):  # the run takes exactly the file's questions
            have = {r.question_id for r in answers.rows}
            cfg.subset.ids = None if len(have) == len(ids) else [q for q in ids if q in have]
    c = build(cfg, check=False)
    c.cache.close()
    fit = check_coverage(answers, [q.id for q in c.questions])
    with open_dict(cfg):
        cfg.method.imported.outside_run = len(fit.outside)
    return len(fit.outside)


def convert(source: str, folder: str, out: str | None, overrides: list[str]) -> Path:
    from memeval.datasets.answers_file import AnswersFileError
    from memeval.datasets.published import DATA_FILE, DATASET
    from memeval.datasets.published import convert as convert_source
    from memeval.harness.estimate import compose

    if not out:
        raise AnswersFileError("--from needs --out OUT.jsonl (where the converted answers file is written)")
    keys = {_key(o) for o in overrides}
    cfg = compose([*([] if "dataset" in keys else [f"dataset={DATASET}"]), *overrides])
    t0 = time.perf_counter()
    converted, sha = convert_source(source, folder, cfg.data_dir, out)
    print(f"{source}: {len(converted.rows)} rows aligned with {DATA_FILE}, 0 refused, "
          f"{time.perf_counter() - t0:.2f} s -> {out} (sha256 {sha})")
    return Path(out)


def main(argv: list[str]) -> int:
    args, overrides = _parser().parse_known_args(argv)
    if args.file and "=" in args.file:  # a Hydra override, not a file (argparse fills FILE first)
        overrides, args.file = [args.file, *overrides], None
    flags = [o for o in overrides if o.startswith("-")]
    if flags:
        _parser().error(f"unknown option(s) {flags}")
    from memeval.harness.resolvers import register_resolvers
    from memeval.model_access.errors import ConfigError

    register_resolvers()
    t0 = time.perf_counter()
    try:
        if args.source:
            path = convert(args.source[0], args.source[1], args.out, overrides)
            if args.convert_only:
                return 0
            if args.file:
                raise ConfigError("give either FILE or --from SOURCE DIR, not both")
        elif args.file:
            path = Path(args.file)
        else:
            _parser().error("an answers FILE or --from SOURCE DIR is required")
        return _import(path, overrides, t0, args.verdicts)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _import(path: Path, overrides: list[str], t0: float, verdicts: str = "judge") -> int:
    from memeval.datasets.answers_file import read_answers
    from memeval.harness.pipeline import run

    answers = read_answers(path)
    overrides = [*verdict_overrides(answers, verdicts, overrides), *overrides]
    cfg = compose_run(answers, overrides)
    if verdicts == "published":  # the source's judge names the run's judge (set here: any text is a name)
        from omegaconf import open_dict

        with open_dict(cfg):
            cfg.judge.model = str(answers.header["judge"]["model"])
    outside = select_questions(cfg, answers, overrides)
    run_dir = run(cfg)
    if run_dir is not None:  # the folder keeps its input: a bundle ships it, a replay reads it
        from memeval.methods.imported import RUN_COPY

        copy = Path(run_dir) / RUN_COPY
        if not copy.exists() or copy.read_bytes() != answers.path.read_bytes():
            shutil.copyfile(answers.path, copy)
    left = f"; {outside} answers to questions this run did not select were left out" if outside else ""
    print(f"imported {len(answers.rows)} answers of {answers.header['system']} ({path}, sha256 {answers.sha256}) "
          f"into {run_dir} in {time.perf_counter() - t0:.2f} s{left}")
    return 0
