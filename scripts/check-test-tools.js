#!/usr/bin/env node
// `npm test`'s first step: the system programs the suites run for real
// (espeak-ng speaks the translation tests' sentences, Chromium drives the
// settings page, PostgreSQL and nginx back the replicas test, cmake and a C++
// compiler build the peer tools, python3 with pip and venv fetch the real
// weights and the Python clients). When any is missing, stop before building
// anything and print the one command that installs them all (.ci/run runs it).
'use strict';
const { existsSync, readdirSync } = require('node:fs');
const { spawnSync } = require('node:child_process');

const onPath = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
const postgres = () => {
  const root = '/usr/lib/postgresql';
  return existsSync(root) && readdirSync(root).some((v) => existsSync(`${root}/${v}/bin/initdb`));
};
const pythonHas = (mod) => spawnSync('python3', ['-c', `import ${mod}`], { stdio: 'ignore' }).status === 0;

/** Debian package → how to tell it is there. */
const NEEDED = {
  cmake: () => onPath('cmake'),
  'g++': () => onPath('g++'),
  make: () => onPath('make'),
  python3: () => onPath('python3'),
  'python3-pip': () => pythonHas('pip'),
  'python3-venv': () => pythonHas('ensurepip'),
  chromium: () => existsSync(process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'),
  'espeak-ng': () => onPath('espeak-ng'),
  postgresql: postgres,
  nginx: () => onPath('nginx') || existsSync('/usr/sbin/nginx'),
  // The decoders' tests encode speech as MP3, FLAC, Ogg Vorbis and Opus (fixtures/encoded.ts).
  sox: () => onPath('sox'),
  'libsox-fmt-mp3': () => spawnSync('sh', ['-c', 'sox -h | grep -q "FILE FORMATS.* mp3"'], { stdio: 'ignore' }).status === 0,
  'opus-tools': () => onPath('opusenc'),
};

const missing = Object.entries(NEEDED).filter(([, present]) => !present()).map(([pkg]) => pkg);
if (missing.length) {
  console.error(`npm test needs programs this machine lacks: ${missing.join(', ')}.`);
  console.error('Install them (Debian/Ubuntu) with:');
  console.error(`  sudo apt-get update && sudo apt-get install -y --no-install-recommends ${Object.keys(NEEDED).join(' ')}`);
  console.error('or run the whole CI script, which installs them and then runs the tests: bash .ci/run');
  process.exit(1);
}
