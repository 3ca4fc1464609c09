#!/usr/bin/env bash
# A patch that must not change a result, checked against the build before it
# on whole runs, and timed: whisper-cli from two builds (OLD_BIN_DIR, a copy
# of build/bin made before the patch; NEW_BIN_DIR, after), real base q8_0,
# every 12th English clip of the held-out set's dev half (8 clips), greedy
# and beam 5, full window, 2 threads. Each pair of runs must write the same
# JSON (-ojf: every token with its probability); the script stops at the
# first that differs. Then ROUNDS rounds on one clip, the builds alternating,
# print whisper.cpp's encode and decode times (ms) per run.
# Usage: benchmarks/studies/patch-ab.sh OLD_BIN_DIR NEW_BIN_DIR [ROUNDS] [CLIP]
set -euo pipefail
old=$1 new=$2 rounds=${3:-5}
set_dir=${STT_EVAL_SET_DIR:-$HOME/.cache/stt-gateway/eval-set}
model=${STT_MODEL:-$HOME/.cache/stt-gateway/models/ggml-base-q8_0.bin}
clip=${4:-clips/mfa/acoustic_corpus.wav}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
runs=0
for f in $(awk -F'\t' '$5 == "dev" && $3 == "en" { print $6 }' "$set_dir/manifest.tsv" | awk 'NR % 12 == 0' | head -8); do
  for beam in 1 5; do
    for b in old new; do
      dir=$old; [ $b = new ] && dir=$new
      "$dir/whisper-cli" -m "$model" -f "$set_dir/$f" -t 2 -l en -bs $beam -bo $beam -ojf -of "$out/$b" >/dev/null 2>&1
    done
    cmp -s "$out/old.json" "$out/new.json" || { echo "differs: $f, beam $beam"; exit 1; }
    runs=$((runs + 1))
  done
done
echo "same tokens and probabilities in all $runs runs"
for r in $(seq "$rounds"); do
  for beam in 1 5; do
    for b in old new; do
      dir=$old; [ $b = new ] && dir=$new
      times=$("$dir/whisper-cli" -m "$model" -f "$set_dir/$clip" -t 2 -l en -bs $beam -bo $beam -nf -nt 2>&1 >/dev/null | grep -o '\(encode\|decode\|batchd\) time = *[0-9.]*' | tr -s ' ' | tr '\n' ' ')
      echo "round $r beam $beam $b: $times"
    done
  done
done
