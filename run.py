"""Entry point: `python run.py method=gsw dataset=epbench200` (add -m for sweeps)."""

from __future__ import annotations

import sys

import hydra
from omegaconf import DictConfig

from harness.resolvers import register_resolvers
from harness.schema import register_schemas
from model_access.errors import ConfigError

register_resolvers()
register_schemas()


@hydra.main(config_path="conf", config_name="config", version_base="1.3")
def main(cfg: DictConfig) -> None:
    from harness.pipeline import run

    try:
        run(cfg)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
