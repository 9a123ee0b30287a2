"""Print a `subset.ids=[...]` override: questions of one corpus whose gold units all lie in its
first N units, stratified as the harness stratifies. Pairs with a method's passage limit
(`method.max_passages=N` for SEEM, `method.max_chapters=N` for GSW) for cheap real-model runs
that still ask only answerable questions.

    python scripts/subset_within.py dataset=locomo --corpus conv-30 --first 10 --n 12
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hydra import compose, initialize_config_dir
from hydra.utils import instantiate

from memeval.datasets.subset import stratified_subset
from memeval.harness.resolvers import register_resolvers
from memeval.harness.schema import register_schemas

ROOT = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("overrides", nargs="*", help="Hydra overrides, e.g. dataset=locomo data_dir=../shared/data")
    ap.add_argument("--corpus", default=None, help="corpus id (default: the corpus of the first question)")
    ap.add_argument("--first", type=int, default=None, help="only questions whose gold units are in the first N units")
    ap.add_argument("--n", type=int, default=12)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    register_resolvers()
    register_schemas()
    with initialize_config_dir(config_dir=str(ROOT / "conf"), version_base="1.3"):
        cfg = compose(config_name="config", overrides=args.overrides)
    ds = instantiate(cfg.dataset.loader).load()
    cid = args.corpus or ds.questions[0].corpus_id
    if cid not in ds.corpora:
        raise SystemExit(f"no corpus {cid!r}; some ids: {', '.join(list(ds.corpora)[:10])}")
    units = sorted(ds.corpora[cid].units, key=lambda u: u.position)
    inside = {u.id for u in (units[:args.first] if args.first else units)}
    pool = [q for q in ds.questions if q.corpus_id == cid and set(q.gold_units) <= inside]
    picked = stratified_subset(pool, args.n, ds.strata_key, args.seed)
    print(f"# {len(picked)} of {len(pool)} questions of {cid} with gold units in its first "
          f"{len(inside)} of {len(units)} units", file=sys.stderr)
    print("subset.ids=[" + ",".join(q.id for q in picked) + "]")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
