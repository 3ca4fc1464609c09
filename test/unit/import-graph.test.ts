// The import graph of src/ has the shape docs/architecture.md draws: no
// circles (type imports included) and no import up the layers.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, writeFileSync, cpSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { ROOT } from '../../fixtures/paths';

const SCRIPT = path.join(ROOT, 'scripts', 'import-cycles.js');
const check = (cwdScript: string) => spawnSync(process.execPath, [cwdScript], { encoding: 'utf8' });

test('src/ has no import circles and no import up the layers', () => {
  const r = check(SCRIPT);
  assert.equal(r.stdout, '', r.stdout);
  assert.equal(r.status, 0);
});

test('the check finds a circle and an upward import when there are some', () => {
  // A copy of the script beside a small src/ with one of each.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'import-graph-'));
  try {
    mkdirSync(path.join(dir, 'scripts'));
    mkdirSync(path.join(dir, 'src', 'store'), { recursive: true });
    mkdirSync(path.join(dir, 'src', 'routes'));
    cpSync(SCRIPT, path.join(dir, 'scripts', 'import-cycles.js'));
    writeFileSync(path.join(dir, 'src', 'a.ts'), "import type { B } from './b';\nexport type A = B;\n");
    writeFileSync(path.join(dir, 'src', 'b.ts'), "import type { A } from './a';\nexport type B = A | 1;\n");
    writeFileSync(path.join(dir, 'src', 'store', 'db.ts'), "import { handler } from '../routes/x';\nexport const db = handler;\n");
    writeFileSync(path.join(dir, 'src', 'routes', 'x.ts'), 'export const handler = 1;\n');
    const r = check(path.join(dir, 'scripts', 'import-cycles.js'));
    assert.equal(r.status, 1);
    assert.match(r.stdout, /circle: a\.ts <-> b\.ts/);
    assert.match(r.stdout, /up: store\/db\.ts -> routes\/x\.ts\n/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
