#!/usr/bin/env bash
# A ggml patch's A/B beside a busy process (first made for the
# yielding-barrier patch): whisper-cli from two builds (a build without the
# patch, e.g. of commit 6937b6c, and build/bin), one clip in the full window,
# 2 threads, greedy or beam BEAM, alone and then beside one busy Python
# process, the two builds alternating. Prints one line per round: wall seconds.
# Usage: benchmarks/studies/barrier-ab.sh UNPATCHED_BIN_DIR PATCHED_BIN_DIR MODEL WAV [ROUNDS] [BEAM]
set -euo pipefail
old=$1 new=$2 model=$3 wav=$4 rounds=${5:-5} beam=${6:-1}
run() { /usr/bin/time -f %e "$1/whisper-cli" -m "$model" -f "$wav" -t 2 -l en -bs "$beam" -bo "$beam" -nf -nt 2>&1 >/dev/null | tail -1; }
for r in $(seq "$rounds"); do echo "alone unpatched $(run "$old") patched $(run "$new")"; done
python3 -c 'while True: pass' & hog=$!
trap 'kill $hog' EXIT
sleep 1
for r in $(seq "$rounds"); do echo "shared unpatched $(run "$old") patched $(run "$new")"; done
