"""Create the Ray environment (ray, hydra-ray-launcher and the framework's requirements, locked).

    python scripts/setup_ray.py            # create it if needed; prints its folder, size and setup time
    python scripts/setup_ray.py --check    # exit 1 if it is not set up
    python scripts/setup_ray.py --python   # print only its python (for scripts: "$(... --python)")

It lives in $MEMEVAL_HOME/envs/ray-<hash of requirements/lock-ray.txt>; an existing one is reused,
so running this again costs a second. Use its `ray` and `python` on every node of a cluster
(README: "A Ray cluster").
"""

from __future__ import annotations

import argparse
import sys
import time

from memeval.harness import ray_env
from memeval.methods.external import envs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true", help="only report whether it is set up")
    ap.add_argument("--python", action="store_true", help="print only its python (creating it if needed)")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    if args.check:
        path = ray_env.find_ray_env()
        if path is None:
            print(f"ray env missing: {ray_env.ray_env_dir()} (python scripts/setup_ray.py)", file=sys.stderr)
            return 1
    else:
        log = (lambda m: print(m, file=sys.stderr, flush=True)) if args.python else print
        try:
            path = ray_env.ensure_ray_env(log=log)
        except envs.EnvSetupError as exc:
            print(f"ray env failed: {exc}", file=sys.stderr)
            return 1
    if args.python:
        print(ray_env.python(path))
        return 0
    info = envs.env_info(ray_env.SPEC) or {}
    print(f"ray env ready: {path}  size {info.get('size_bytes', 0) / 2**20:,.0f} MB  "
          f"setup {info.get('setup_seconds')}s (this call {time.perf_counter() - t0:.1f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
