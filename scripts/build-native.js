#!/usr/bin/env node
// Builds the addon with cmake-js against Node's local headers. Never downloads
// headers: a machine without them gets a clear error.
// Usage: build-native.js [--peers | --portable]
//   (none)      the addon alone, build/Release/stt_native.node: what `npm install`
//               builds (`npm run build:native`)
//   --peers     the addon and the tools tests and benchmarks run beside it:
//               whisper.cpp's whisper-cli, whisper-quantize, parakeet-cli,
//               whisper-server and whisper-bench, and our harness, into build/bin/
//               (`npm run build:peers`, run by pretest and the benchmarks'
//               pre-scripts). Same build directory, so whisper.cpp is compiled
//               once for both; an up-to-date addon is left as it is.
//   --portable  prebuild-safe flags, the addon alone, into build/portable
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
const portable = process.argv.includes('--portable');
const peers = process.argv.includes('--peers');
if (portable && peers) {
  process.stderr.write('build-native: --portable builds the addon alone; --peers cannot go with it.\n');
  process.exit(1);
}

function nodeDir() {
  const candidates = [process.env.npm_config_nodedir, path.resolve(path.dirname(process.execPath), '..')];
  for (const dir of candidates) {
    if (dir && fs.existsSync(path.join(dir, 'include', 'node', 'node_api.h'))) return dir;
  }
  process.stderr.write('build-native: Node headers not found (looked for include/node/node_api.h under ' +
    candidates.filter(Boolean).join(', ') + '). Install them (Debian: libnode-dev / nodejs headers) or set npm_config_nodedir.\n');
  process.exit(1);
}

const whisperDir = execFileSync(process.execPath, [path.join(__dirname, 'whisper-source.js')], { encoding: 'utf8' }).trim();
// cmake-js reads nodedir from npm's config environment and then uses <nodedir>/include/node.
process.env.npm_config_nodedir = nodeDir();
const cmakeJs = require.resolve('cmake-js/bin/cmake-js', { paths: [root] });
const out = path.join(root, 'build', ...(portable ? ['portable'] : []));
const options = ['--directory', root, '--out', out, '--config', 'Release',
  `--CDWHISPER_CPP_DIR=${whisperDir}`,
  `--CDSTT_PORTABLE=${portable ? 'ON' : 'OFF'}`,
  `--CDSTT_BUILD_PEERS=${peers ? 'ON' : 'OFF'}`,
  '--parallel', String(Math.max(1, require('node:os').availableParallelism()))];
const cmakeJsRun = (command, extra = []) =>
  execFileSync(process.execPath, [cmakeJs, command, ...options, ...extra], { stdio: 'inherit', cwd: root });

if (!peers) {
  // cmake-js configures only a directory without a CMakeCache.txt, so a tree
  // configured with the peers keeps them; the target keeps this build to the addon.
  cmakeJsRun('compile', ['--target', 'stt_native']);
} else {
  // A tree configured without the peers (by `npm install`) is configured again
  // in place with them: the addon's sources and flags are the same, so the
  // build leaves the addon as it is unless its sources changed. `build`, not
  // `compile`: a failing peer must not make cmake-js wipe the build directory
  // (and the addon in it) for a full rebuild.
  const cache = path.join(out, 'CMakeCache.txt');
  if (fs.existsSync(cache) && !/^STT_BUILD_PEERS:BOOL=ON$/m.test(fs.readFileSync(cache, 'utf8'))) cmakeJsRun('configure');
  cmakeJsRun('build');
}
