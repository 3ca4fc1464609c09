#!/usr/bin/env node
// Stands in for node-gyp under prebuildify (see prebuild.js): ignores
// node-gyp's arguments, builds the portable addon and puts it where
// prebuildify looks for it (<cwd>/build/Release).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
execFileSync(process.execPath, [path.join(__dirname, 'build-native.js'), '--portable'], { stdio: 'inherit', cwd: root });
const out = path.join(process.cwd(), 'build', 'Release');
fs.mkdirSync(out, { recursive: true });
fs.copyFileSync(path.join(root, 'build', 'portable', 'Release', 'stt_native.node'), path.join(out, 'stt_native.node'));
