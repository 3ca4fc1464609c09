// package.json's engines.node must promise no Node version that a runtime
// dependency refuses (sqlite3 6 needs 20.17, cmake-js 8 needs ^20.17 || >=22.9), nor one that cannot
// require() the ES-module WebAssembly decoders (opus-decoder, ogg-vorbis): 20.19 and 22.12 can.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import semver from 'semver';
import { ROOT } from '../../fixtures';

const readJson = (p: string) => JSON.parse(readFileSync(p, 'utf8'));

test('engines.node is within every runtime dependency\'s engines.node', () => {
  const pkg = readJson(path.join(ROOT, 'package.json'));
  const ours: string = pkg.engines.node;
  let checked = 0;
  for (const dep of Object.keys(pkg.dependencies)) {
    const theirs = readJson(path.join(ROOT, 'node_modules', dep, 'package.json')).engines?.node;
    if (!theirs) continue;
    checked++;
    assert.ok(semver.subset(ours, theirs), `engines.node "${ours}" admits versions ${dep} refuses ("${theirs}")`);
  }
  assert.ok(checked >= 3, 'sqlite3, cmake-js and others declare engines');
  assert.ok(semver.satisfies(process.versions.node, ours), `this Node (${process.versions.node}) is one we promise`);
});
