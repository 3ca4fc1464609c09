#!/usr/bin/env bash
# `npm run test:quick-start`: the README's quick start, as a newcomer runs it.
# Clones this repository (its committed HEAD) into a temporary directory, runs
# the commands between the README's `quick-start` markers in order (the last,
# `npm start`, in the background on a free port), then the commands between
# its `first-transcription` markers, and checks the answer is the sample's
# text. CI runs it after `npm test` (.ci/run), on a machine where the README's
# one-line prerequisites are installed. About 10 minutes: the clone builds
# the addon and whisper.cpp's tools from nothing; the weights come from the
# cache `npm test` filled (~/.cache/stt-gateway), as a second run would.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
server=""
cleanup() {
  # The server runs in its own process group (setsid): npm and the node it started stop together.
  if [ -n "$server" ]; then kill -- "-$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

block() { # the shell lines between <!-- $1 ... --> and <!-- /$1 -->, fences and comments dropped
  awk -v start="<!-- $1" -v stop="<!-- /$1 -->" '
    index($0, stop) == 1 { inside = 0 }
    inside && !/^```/ { sub(/[[:space:]]+#.*$/, ""); if (length($0)) print }
    index($0, start) == 1 && index($0, stop) != 1 { inside = 1 }
  ' "$root/README.md"
}

mapfile -t quick < <(block quick-start)
mapfile -t first < <(block first-transcription)
[ "${#quick[@]}" -ge 2 ] && [ "${quick[-1]}" = "npm start" ] || { echo "README: the quick start must end with npm start (found: ${quick[*]:-nothing})" >&2; exit 1; }
[ "${#first[@]}" -ge 1 ] || { echo "README: no first-transcription block" >&2; exit 1; }

git clone -q "$root" "$work/stt-gateway"
cd "$work/stt-gateway"
for cmd in "${quick[@]:0:${#quick[@]}-1}"; do
  echo "quick start: $cmd"
  bash -c "$cmd"
done

port=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
echo "quick start: npm start (PORT=$port)"
PORT=$port setsid npm start > "$work/server.log" 2>&1 &
server=$!
for _ in $(seq 1 600); do
  if grep -q 'local runtime ready' "$work/server.log"; then break; fi
  if ! kill -0 "$server" 2>/dev/null; then cat "$work/server.log" >&2; echo "the server exited" >&2; exit 1; fi
  sleep 0.5
done
grep -q 'local runtime ready' "$work/server.log" || { cat "$work/server.log" >&2; echo "no model became ready" >&2; exit 1; }

script=$(printf '%s\n' "${first[@]}" | sed "s/127\.0\.0\.1:8080/127.0.0.1:$port/g")
echo "first transcription:"
printf '%s\n' "$script"
answer=$(bash -c "$script")
echo "$answer"
case "$answer" in
  *'ask not what your country can do for you'*) echo "quick start: ok" ;;
  *) echo "quick start: the first transcription did not give the sample's text" >&2; exit 1 ;;
esac
