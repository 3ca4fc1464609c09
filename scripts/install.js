#!/usr/bin/env node
// `npm install` hook: use a binary that already loads here (a matching
// prebuild in prebuilds/, or an earlier build/Release) and compile from
// source only when there is none, and then the addon alone: whisper.cpp's
// tools and our harness are for tests and benchmarks, which build them with
// `npm run build:peers` (pretest, prebench). (node-gyp-build's own install
// command always runs node-gyp, which does not build CMake projects.)
'use strict';
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
if (!process.env.STT_BUILD_FROM_SOURCE) {
  try {
    const file = require('node-gyp-build').path(root);
    require(file);
    console.log(`stt-gateway: using the native addon at ${path.relative(root, file)}`);
    process.exit(0);
  } catch {
    // nothing loadable yet: build below
  }
}
execFileSync(process.execPath, [path.join(__dirname, 'build-native.js')], { stdio: 'inherit', cwd: root });
