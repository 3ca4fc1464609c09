#!/usr/bin/env node
// `npm install` hook: use a binary that already loads here (a matching
// prebuild in prebuilds/, or an earlier build/Release) and compile from
// source only when there is none, and then the addon alone: whisper.cpp's
// tools and our harness are for tests and benchmarks, which build them with
// `npm run build:peers` (pretest, prebench). (node-gyp-build's own install
// command always runs node-gyp, which does not build CMake projects.)
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
if (!process.env.STT_BUILD_FROM_SOURCE) {
  try {
    const file = require('node-gyp-build').path(root);
    // One built before a change to our whisper.cpp patches is built again.
    const pin = JSON.parse(fs.readFileSync(path.join(root, 'third_party', 'whisper.cpp.json'), 'utf8'));
    const patches = pin.patches.map((p) => p.id).join(',');
    if (require(file).whisperPatches !== patches) throw new Error(`built without the patches ${patches}`);
    console.log(`stt-gateway: using the native addon at ${path.relative(root, file)}`);
    process.exit(0);
  } catch {
    // nothing loadable yet: build below
  }
}
execFileSync(process.execPath, [path.join(__dirname, 'build-native.js')], { stdio: 'inherit', cwd: root });
