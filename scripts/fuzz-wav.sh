#!/usr/bin/env bash
# Builds the audio decoders with AddressSanitizer + UBSan and runs a bounded,
# seeded mutation fuzz over each: the WAV decoder on generated WAVs, and the
# MP3 and FLAC decoders (audio_decoder.cpp) on the seed files in
# native/audio/fuzz/seeds. Any over-read, leak or UB aborts with a report.
# Usage: scripts/fuzz-wav.sh [wav iterations] [seed] [compressed-audio iterations]
set -euo pipefail
cd "$(dirname "$0")/.."
out=build/fuzz
mkdir -p "$out"
if [ ! -x "$out/wav_fuzz" ] || [ -n "$(find native -newer "$out/wav_fuzz" -name '*.cpp' -o -newer "$out/wav_fuzz" -name '*.h' | head -1)" ]; then
  g++ -std=c++17 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
    -Wall -Wextra -Inative/audio native/audio/fuzz/wav_fuzz.cpp native/audio/wav_decoder.cpp native/audio/resampler.cpp -o "$out/wav_fuzz"
fi
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 "$out/wav_fuzz" "${1:-20000}" "${2:-20261121}"
# The compressed formats: miniaudio from the pinned whisper.cpp tree, built here under the sanitizers too.
examples="$(node scripts/whisper-source.js)/examples"
if [ ! -x "$out/audio_fuzz" ] || [ -n "$(find native scripts/fuzz-wav.sh -newer "$out/audio_fuzz" \( -name '*.cpp' -o -name '*.h' -o -name '*.js' -o -name '*.sh' \) | head -1)" ]; then
  flags=(-std=c++17 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -Inative/audio -isystem "$examples")
  # The third-party decoders are built with -fwrapv, as in the addon (CMakeLists.txt): dr_flac's LPC sums overflow
  # on damaged input, which -fwrapv makes a wrapped (wrong but defined) sample instead of undefined behaviour.
  g++ "${flags[@]}" -fwrapv -c native/audio/codecs.cpp -o "$out/codecs.o"
  g++ "${flags[@]}" -Wall -Wextra native/audio/fuzz/audio_fuzz.cpp native/audio/audio_decoder.cpp native/audio/wav_decoder.cpp native/audio/resampler.cpp "$out/codecs.o" -o "$out/audio_fuzz"
fi
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 "$out/audio_fuzz" "${3:-3000}" "${2:-20261121}" native/audio/fuzz/seeds
