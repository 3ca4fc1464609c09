#!/usr/bin/env node
// `npm run prebuild`: a portable binary (no -march=native) packaged by
// prebuildify into prebuilds/<platform>-<arch>/. prebuildify drives the
// compiler through PREBUILD_NODE_GYP; ours builds with cmake-js into a staging
// directory so the local native build in build/Release is left alone.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const root = path.resolve(__dirname, '..');
const stage = path.join(root, 'build', 'prebuild-stage');
fs.rmSync(stage, { recursive: true, force: true });
fs.mkdirSync(stage, { recursive: true });
fs.copyFileSync(path.join(root, 'package.json'), path.join(stage, 'package.json'));

const prebuildify = require.resolve('prebuildify/bin.js', { paths: [root] });
execFileSync(process.execPath, [prebuildify, '--napi', '--strip', '--cwd', stage], {
  stdio: 'inherit',
  env: { ...process.env, PREBUILD_NODE_GYP: path.join(__dirname, 'prebuild-backend.js'), PREBUILD_SHELL: '' },
});
const from = path.join(stage, 'prebuilds');
fs.cpSync(from, path.join(root, 'prebuilds'), { recursive: true });
for (const dir of fs.readdirSync(from)) console.log(`prebuilds/${dir}: ${fs.readdirSync(path.join(from, dir)).join(', ')}`);
