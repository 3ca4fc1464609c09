#!/usr/bin/env node
// Locates the pinned whisper.cpp source and proves it is the one we expect:
// version 1.9.1 and a sha256 over src/, include/, ggml/ and examples/ (the
// peers the benchmarks run: whisper-cli, whisper-server, parakeet-cli) equal
// to the one recorded in third_party/whisper.cpp.json. Prints the directory on success.
// Usage: whisper-source.js [--record]
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');

const root = path.resolve(__dirname, '..');
const pinFile = path.join(root, 'third_party', 'whisper.cpp.json');
const pin = JSON.parse(fs.readFileSync(pinFile, 'utf8'));

function locate() {
  if (process.env.WHISPER_CPP_DIR) return path.resolve(process.env.WHISPER_CPP_DIR);
  try {
    const pkg = require.resolve('nodejs-whisper/package.json', { paths: [root] });
    return path.join(path.dirname(pkg), 'cpp', 'whisper.cpp');
  } catch {
    return null;
  }
}

function listFiles(dir, base, out) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) listFiles(full, base, out);
    else if (entry.isFile()) out.push(path.relative(base, full).split(path.sep).join('/'));
  }
  return out;
}

function treeHash(dir) {
  const hash = crypto.createHash('sha256');
  for (const sub of ['src', 'include', 'ggml', 'examples']) {
    for (const rel of listFiles(path.join(dir, sub), dir, []).sort()) {
      hash.update(rel + '\0');
      hash.update(fs.readFileSync(path.join(dir, rel)));
      hash.update('\0');
    }
  }
  return hash.digest('hex');
}

function fail(message) {
  process.stderr.write(`whisper-source: ${message}\n`);
  process.exit(1);
}

const dir = locate();
if (!dir || !fs.existsSync(path.join(dir, 'CMakeLists.txt'))) {
  fail('whisper.cpp source not found. Run `npm install` (it brings nodejs-whisper@0.3.1) or set WHISPER_CPP_DIR.');
}
const cmake = fs.readFileSync(path.join(dir, 'CMakeLists.txt'), 'utf8');
const version = /project\("whisper\.cpp" VERSION ([0-9.]+)\)/.exec(cmake)?.[1];
if (version !== pin.version) fail(`${dir} is whisper.cpp ${version ?? 'unknown'}, expected ${pin.version}.`);

const actual = treeHash(dir);
if (process.argv.includes('--record')) {
  pin.treeSha256 = actual;
  fs.writeFileSync(pinFile, JSON.stringify(pin, null, 2) + '\n');
} else if (actual !== pin.treeSha256) {
  if (process.env.WHISPER_CPP_DIR) {
    process.stderr.write(`whisper-source: warning: ${dir} differs from the pinned tree (${actual}); using it because WHISPER_CPP_DIR is set.\n`);
  } else {
    fail(`source tree hash ${actual} does not match the pinned ${pin.treeSha256}.`);
  }
}
process.stdout.write(dir + '\n');
