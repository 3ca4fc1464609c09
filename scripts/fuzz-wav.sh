#!/usr/bin/env bash
# Builds the WAV decoder with AddressSanitizer + UBSan and runs a bounded,
# seeded mutation fuzz over it. Any over-read or UB aborts with a report.
# Usage: scripts/fuzz-wav.sh [iterations] [seed]
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/fuzz
mkdir -p "$out"
if [ ! -x "$out/wav_fuzz" ] || [ -n "$(find native -newer "$out/wav_fuzz" -name '*.cpp' -o -newer "$out/wav_fuzz" -name '*.h' | head -1)" ]; then
  g++ -std=c++17 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
    -Wall -Wextra -Inative native/fuzz/wav_fuzz.cpp native/wav_decoder.cpp native/resampler.cpp -o "$out/wav_fuzz"
fi
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 "$out/wav_fuzz" "${1:-20000}" "${2:-20261121}"
