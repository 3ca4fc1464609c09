#!/usr/bin/env bash
# A patch that must not change a result, checked against the build before it
# on whole runs, and timed: whisper-cli from two builds (OLD_BIN_DIR, a copy
# of build/bin made before the patch; NEW_BIN_DIR, after), real base q8_0,
# every 12th English clip of the held-out set's dev half (8 clips), greedy
# and beam 5, full window, 2 threads. Each pair of runs must write the same
# JSON (-ojf: every token with its probability); the script stops at the
# first that differs or fails. Then ROUNDS rounds on one dev clip (CLIP, a
# path under the set), the builds alternating in order, print whisper.cpp's
# encode, decode and batch-decode times (ms) per run. STT_AB_LANGUAGE sets
# whisper-cli's -l (en; auto for requests without a language).
# STT_AB_COMPARE=text is for a patch that changes last bits on purpose: the
# runs' transcripts (-otxt) are compared instead, and those that differ are
# printed and counted rather than stopping the script.
# Usage: benchmarks/studies/patch-ab.sh OLD_BIN_DIR NEW_BIN_DIR [ROUNDS] [CLIP]
set -euo pipefail
old=$1 new=$2 rounds=${3:-5}
language=${STT_AB_LANGUAGE:-en}
compare=${STT_AB_COMPARE:-tokens}
case $compare in tokens) ext=json flag=-ojf ;; text) ext=txt flag=-otxt ;; *) echo "STT_AB_COMPARE is tokens or text"; exit 1 ;; esac
set_dir=${STT_EVAL_SET_DIR:-$HOME/.cache/stt-gateway/eval-set}
model=${STT_MODEL:-$HOME/.cache/stt-gateway/models/ggml-base-q8_0.bin}
clips=$(awk -F'\t' '$5 == "dev" && $3 == "en" { print $6 }' "$set_dir/manifest.tsv" | awk 'NR % 12 == 0' | head -8)
clip=${4:-$(awk -F'\t' '$5 == "dev" && $3 == "en" && $4 > 20 { print $6; exit }' "$set_dir/manifest.tsv")}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cli() { "$1/whisper-cli" -m "$model" -f "$set_dir/$2" -t 2 -l "$language" -bs "$3" -bo "$3" "${@:4}"; }
runs=0 differing=0
for f in $clips; do
  for beam in 1 5; do
    rm -f "$out"/*."$ext"
    cli "$old" "$f" $beam $flag -of "$out/old" >/dev/null 2>&1
    cli "$new" "$f" $beam $flag -of "$out/new" >/dev/null 2>&1
    [ -s "$out/old.$ext" ] && [ -s "$out/new.$ext" ] || { echo "no output: $f, beam $beam"; exit 1; }
    if ! cmp -s "$out/old.$ext" "$out/new.$ext"; then
      echo "differs: $f, beam $beam"
      [ "$compare" = text ] || exit 1
      diff "$out/old.$ext" "$out/new.$ext" || true
      differing=$((differing + 1))
    fi
    runs=$((runs + 1))
  done
done
[ "$runs" -eq 16 ] || { echo "only $runs runs: is the held-out set there ($set_dir)?"; exit 1; }
if [ "$compare" = text ]; then
  echo "the same transcript in $((runs - differing)) of $runs runs; timing on $clip"
else
  echo "same tokens and probabilities in all $runs runs; timing on $clip"
fi
for r in $(seq "$rounds"); do
  order="old new"; [ $((r % 2)) -eq 0 ] && order="new old"
  for beam in 1 5; do
    for b in $order; do
      dir=$old; [ "$b" = new ] && dir=$new
      times=$(cli "$dir" "$clip" $beam -nf -nt 2>&1 >/dev/null | grep -o '\(encode\|decode\|batchd\) time = *[0-9.]*' | tr -s ' ' | tr '\n' ' ' || true)
      [ -n "$times" ] || { echo "no timings from $dir/whisper-cli on $clip"; exit 1; }
      echo "round $r beam $beam $b: $times"
    done
  done
done
