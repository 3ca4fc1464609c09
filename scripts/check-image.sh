#!/usr/bin/env bash
# `npm run test:image`: deploy/Dockerfile without a container engine. Copies
# what the build stage's COPY lines name (from this repository's committed
# HEAD) into a clean directory, runs its RUN of deploy/image-build.sh there
# (the machine has the apt packages the stage installs: .ci/run), copies what
# the runtime stage's COPY --from=build lines name into a second directory,
# and starts its CMD there with its ENV, as an unprivileged user, on a free
# loopback port: /health must answer and the settings page load. A COPY that
# misses a file the build needs, an install that skips a binding the server
# loads, or a runtime stage without a file the server reads fails here.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
server=""
cleanup() {
  if [ -n "$server" ]; then kill -- "-$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

git clone -q "$root" "$work/repo"
mkdir -p "$work/build" "$work/run"
# The Dockerfile's instructions, continuation lines joined, comments dropped.
mapfile -t lines < <(sed -e ':a' -e '/\\$/N; s/\\\n//; ta' "$work/repo/deploy/Dockerfile" | grep -v '^\s*#' | grep -v '^\s*$')

stage=0
run_env=()
cmd=()
for line in "${lines[@]}"; do
  read -r -a words <<< "$line"
  case "${words[0]}" in
    FROM) stage=$((stage + 1)) ;;
    COPY)
      if [ "$stage" = 1 ]; then
        # As docker does: a directory's contents go into the destination; files into it when it ends in /.
        dest="$work/build/${words[-1]#./}"
        mkdir -p "$dest"
        for src in "${words[@]:1:${#words[@]}-2}"; do
          if [ -d "$work/repo/$src" ]; then cp -r "$work/repo/$src/." "$dest/"; else cp "$work/repo/$src" "$dest/"; fi
        done
      else
        [[ "${words[1]}" == --from=build ]] || { echo "check-image: unexpected runtime COPY: $line" >&2; exit 1; }
        src="$work/build/${words[2]#/app/}"
        dest="$work/run/${words[3]#./}"
        mkdir -p "$(dirname "$dest")"
        cp -r "$src" "$dest"
      fi ;;
    RUN)
      if [ "$stage" = 1 ] && [[ "$line" == *deploy/image-build.sh* ]]; then
        echo "check-image: build stage: ${line#RUN }"
        (cd "$work/build" && bash -c "${line#RUN }")
      else
        echo "check-image: not run here: ${line:0:80}"
      fi ;;
    ENV) if [ "$stage" = 2 ]; then run_env+=("${words[@]:1}"); fi ;;
    CMD) if [ "$stage" = 2 ]; then mapfile -t cmd < <(node -e 'JSON.parse(process.argv[1]).forEach((a) => console.log(a))' "${line#CMD }"); fi ;;
  esac
done
[ "${#cmd[@]}" -gt 0 ] || { echo "check-image: no CMD in the runtime stage" >&2; exit 1; }

# The runtime stage's user: files as the image has them (root's, readable by others), its own data dir.
port=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")
mkdir -p "$work/data"
chmod 755 "$work" "$work/run"
as_user=()
if [ "$(id -u)" = 0 ]; then
  chown nobody "$work/data"
  as_user=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
fi
echo "check-image: runtime stage: ${run_env[*]} ${cmd[*]} (HOST, PORT and STT_DATA_DIR for this machine)"
cd "$work/run"
# setsid: the server leads its own process group, stopped whole by cleanup. No model: nothing to download offline.
env -i PATH="$PATH" HOME="$work/data" "${run_env[@]}" HOST=127.0.0.1 PORT="$port" STT_DATA_DIR="$work/data" STT_DEFAULT_MODEL=none \
  setsid "${as_user[@]}" "${cmd[@]}" > "$work/server.log" 2>&1 &
server=$!
get() { # the body of a GET, or a failed exit
  node -e 'fetch(process.argv[1]).then(async (r) => { const t = await r.text(); if (!r.ok) process.exit(1); process.stdout.write(t); }, () => process.exit(1))' "$1"
}
for _ in $(seq 1 120); do
  if get "http://127.0.0.1:$port/health" > "$work/health.json"; then break; fi
  if ! kill -0 "$server" 2>/dev/null; then cat "$work/server.log" >&2; echo "check-image: the server exited" >&2; exit 1; fi
  sleep 0.5
done
get "http://127.0.0.1:$port/health" > /dev/null || { cat "$work/server.log" >&2; echo "check-image: /health did not answer" >&2; exit 1; }
get "http://127.0.0.1:$port/settings" | grep -qi '<html' || { cat "$work/server.log" >&2; echo "check-image: the settings page did not load" >&2; exit 1; }
echo "check-image: ok ($(cat "$work/health.json"))"
