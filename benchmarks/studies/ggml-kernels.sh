#!/usr/bin/env bash
# `bash benchmarks/studies/ggml-kernels.sh [runs]`: what llamafile's tinyBLAS kernels
# (GGML_LLAMAFILE, CMakeLists.txt) change. Builds whisper-cli twice from the
# pinned whisper.cpp tree, the same flags as the addon but that one, into
# ~/.cache/stt-gateway/ggml-kernels/<tree hash> (kept: later runs reuse it),
# then times both side by side, alternating, on the real base models: encoder
# and total milliseconds per clip (median of the runs), and on ÷ off.
# 2 threads, greedy, English, no temperature fallback; a 5-s clip in 768 and
# 512 positions and a 30-s clip in the full window, joined from
# ../shared/audio. Needs bash 4, cmake, a C++ compiler and `npm run models:real`.
set -euo pipefail
cd "$(dirname "$0")/../.."
RUNS=${1:-5}
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || { echo "runs must be a whole number from 1" >&2; exit 2; }
CACHE=${STT_CACHE_DIR:-$HOME/.cache/stt-gateway}
for model in base-q8_0 base; do
  [ -f "$CACHE/models/ggml-$model.bin" ] || { echo "$CACHE/models/ggml-$model.bin is missing: run npm run models:real" >&2; exit 1; }
done
SRC=$(node scripts/whisper-source.js)
TREE=$(node -p "require('./third_party/whisper.cpp.json').treeSha256.slice(0, 16)")
OUT=$CACHE/ggml-kernels/$TREE
FLAGS=""
# As CMakeLists.txt: ggml's AMX kernels crash in these VMs.
[ "$(uname -m)" = x86_64 ] && FLAGS="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"

for kernels in off on; do
  flag=$([ $kernels = on ] && echo ON || echo OFF)
  if [ ! -x "$OUT/$kernels/bin/whisper-cli" ]; then
    mkdir -p "$OUT"
    # ggml's own compiler warnings are many; the log is shown only if the build fails.
    { cmake -S "$SRC" -B "$OUT/$kernels" -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=ON -DGGML_OPENMP=OFF \
        -DBUILD_SHARED_LIBS=OFF -DGGML_LLAMAFILE=$flag -DCMAKE_C_FLAGS="$FLAGS" -DCMAKE_CXX_FLAGS="$FLAGS" &&
      cmake --build "$OUT/$kernels" --target whisper-cli --parallel 2; } >"$OUT/build-$kernels.log" 2>&1 ||
      { tail -30 "$OUT/build-$kernels.log" >&2; exit 1; }
  fi
done

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
npx tsx -e "
  const { writeFileSync } = require('node:fs');
  const { speechClip } = require('./fixtures');
  for (const s of [5, 30]) writeFileSync('$WORK/clip-' + s + '.wav', speechClip(s));
"

median() { tr ' ' '\n' | grep . | sort -n | awk '{a[NR]=$1} END{print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

printf '| model | clip, window | encoder off, on (ms) | on ÷ off | total off, on (ms) | on ÷ off |\n|---|---|---|---|---|---|\n'
for model in base-q8_0 base; do
  for case in "5 768" "5 512" "30 0"; do
    set -- $case
    declare -A enc=() tot=()
    for _ in $(seq "$RUNS"); do
      for kernels in off on; do
        read -r e t < <("$OUT/$kernels/bin/whisper-cli" -m "$CACHE/models/ggml-$model.bin" -f "$WORK/clip-$1.wav" \
          -t 2 -l en -ac "$2" -nf -bs 1 -bo 1 2>&1 | awk '/encode time/{e=$5} /total time/{t=$5} END{print e, t}') || true
        [ -n "$e" ] && [ -n "$t" ] || { echo "whisper-cli ($kernels) printed no timings for ggml-$model.bin" >&2; exit 1; }
        enc[$kernels]+=" $e"; tot[$kernels]+=" $t"
      done
    done
    eo=$(echo "${enc[off]}" | median); en=$(echo "${enc[on]}" | median)
    to=$(echo "${tot[off]}" | median); tn=$(echo "${tot[on]}" | median)
    window=$([ "$2" = 0 ] && echo full || echo "$2")
    awk -v m="$model" -v c="$1 s, $window" -v eo="$eo" -v en="$en" -v to="$to" -v tn="$tn" \
      'BEGIN{printf "| %s | %s | %.0f, %.0f | %.2f | %.0f, %.0f | %.2f |\n", m, c, eo, en, en/eo, to, tn, tn/to}'
    unset enc tot
  done
done
