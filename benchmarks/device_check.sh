#!/usr/bin/env bash
# The GPU path, checked on a lent CUDA machine (this workplace's `device` tool; CI has no GPU).
#
#   bash benchmarks/device_check.sh tests   # tests/model/test_cuda.py, then the suite (no browser, no Ray) with the
#                                           # GPU present, so every model the tests train and load runs on CUDA
#   bash benchmarks/device_check.sh quick   # both, shortened, in one call (~6 minutes on an H100)
#   bash benchmarks/device_check.sh bench   # attention (fp32, bf16), a training step against the peers, each
#                                           # screen's first computation at seq_len 1440 and 5760, on CUDA
#
# The machine has Python 3.12 and its own torch; what it lacks travels as wheels in .whl/ and the data and the
# Time-Series-Library source in .devdata/ (both ignored by git; see benchmarks/README.md). Logs go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/device-out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || exit 1
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
# Child processes the tests start (the CLI, servers, the docs' examples) set their own PYTHONPATH: the wheels go first
# on every interpreter's path through a .pth file too.
echo "import sys; sys.path.insert(0, '/tmp/site')" > "$(python3 -c 'import site; print(site.getsitepackages()[0])')/zz_lab_wheels.pth"
# Each failure's cause is written as it happens (pytest prints them only at its end, which a time limit can cut off)
export INFORMER_TEST_FAILURES="$OUT/failures.txt"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
python3 -c "import torch, pandas, streamlit; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(),
'pandas', pandas.__version__, 'streamlit', streamlit.__version__)"

suite() {  # the suite (no browser, no Ray) with the GPU present: every model the tests train or load runs on CUDA
  timeout "${SUITE_SECONDS:-300}" python3 -m pytest -v -p no:cacheprovider -n 15 --timeout 200 --tb=short -rfE \
    --ignore=tests/e2e --ignore=tests/study --ignore=tests/ui/studies --continue-on-collection-errors tests \
    > "$OUT/suite.txt" 2>&1
  echo "suite: $(grep -c ' PASSED ' "$OUT/suite.txt") passed, $(grep -cE ' (FAILED|ERROR) ' "$OUT/suite.txt") failed"
  grep -E ' (FAILED|ERROR) ' "$OUT/suite.txt" | sed 's/^.*\(FAILED\|ERROR\) /\1 /' | sort | uniq | head -40
}

case "${1:-tests}" in
tests)
  python3 -m pytest -q -p no:cacheprovider tests/model/test_cuda.py -rfE 2>&1 | tee "$OUT/test_cuda.txt" | tail -15
  suite
  ;;
quick)  # one call: the CUDA tests, short benchmarks, then the suite for what time is left
  python3 -m pytest -q -p no:cacheprovider tests/model/test_cuda.py -rfE 2>&1 | tee "$OUT/test_cuda.txt" | tail -15
  python3 benchmarks/attention.py --device cuda --lengths 96 8192 --rounds 10 2>&1 | tee "$OUT/attention.txt" \
    | tail -12
  python3 benchmarks/attention.py --device cuda --dtype bf16 --lengths 96 8192 --rounds 10 --no-memory 2>&1 \
    | tail -3
  python3 benchmarks/train_speed.py --device cuda --csv .devdata/ETTh1.csv --tsl .devdata/tsl --blocks 4 --steps 5 \
    2>&1 | tee "$OUT/train_speed.txt" | grep -E "^(official|ours|tsl|per-block)"
  timeout 90 python3 benchmarks/long_inputs.py --device cuda --csv .devdata/ETTm1.csv --lengths 5760 \
    --calls compare sparsity 2>&1 | grep -v '^\[{'
  suite
  ;;
bench)
  python3 benchmarks/attention.py --device cuda --lengths 96 512 2048 8192 32768 2>&1 | tee "$OUT/attention_fp32.txt"
  python3 benchmarks/attention.py --device cuda --dtype bf16 --lengths 96 8192 32768 --no-memory 2>&1 \
    | tee "$OUT/attention_bf16.txt" | tail -12
  python3 benchmarks/train_speed.py --device cuda --csv .devdata/ETTh1.csv --tsl .devdata/tsl --blocks 8 --steps 10 \
    2>&1 | tee "$OUT/train_speed.txt" | tail -14
  timeout 240 python3 benchmarks/long_inputs.py --device cuda --csv .devdata/ETTm1.csv --lengths 1440 5760 2>&1 \
    | tee "$OUT/long_inputs.txt" | grep -v '^\[{'
  ;;
esac
