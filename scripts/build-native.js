#!/usr/bin/env node
// Builds the addon (and the peer tools) with cmake-js against Node's local
// headers. Never downloads headers: a machine without them gets a clear error.
// Usage: build-native.js [--portable]   (--portable: prebuild-safe flags, no peers)
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
const portable = process.argv.includes('--portable');

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
const args = [cmakeJs, 'compile', '--directory', root, '--config', 'Release',
  `--CDWHISPER_CPP_DIR=${whisperDir}`,
  `--CDSTT_PORTABLE=${portable ? 'ON' : 'OFF'}`,
  `--CDSTT_BUILD_PEERS=${portable || process.env.STT_SKIP_PEERS ? 'OFF' : 'ON'}`,
  '--parallel', String(Math.max(1, require('node:os').availableParallelism()))];
if (portable) args.push('--out', path.join(root, 'build', 'portable'));
execFileSync(process.execPath, args, { stdio: 'inherit', cwd: root });
