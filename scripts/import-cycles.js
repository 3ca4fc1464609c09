#!/usr/bin/env node
// Lists the import circles among src/'s modules (type imports included), and
// imports that go up the layers the architecture doc draws. Used by a unit
// test, so a new circle fails the suite. Usage: node scripts/import-cycles.js
'use strict';
const fs = require('node:fs');
const path = require('node:path');

const SRC = path.resolve(__dirname, '..', 'src');

function files(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    return e.isDirectory() ? files(full) : /\.tsx?$/.test(e.name) ? [full] : [];
  });
}

function resolve(from, spec) {
  if (!spec.startsWith('.')) return null;
  const base = path.resolve(path.dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, `${base}.d.ts`, path.join(base, 'index.ts')]) {
    if (fs.existsSync(candidate) && fs.statSync(candidate).isFile()) return candidate;
  }
  return null;
}

/**
 * Every module under src/ with the modules under src/ it imports (static,
 * dynamic and re-exports); `values` holds the ones imported for more than
 * types (what exists at run time).
 */
function graph() {
  const edges = new Map();
  const values = new Map();
  for (const file of files(SRC)) {
    const text = fs.readFileSync(file, 'utf8');
    const targets = new Set();
    const valueTargets = new Set();
    for (const m of text.matchAll(/(?:^|\n)\s*((?:import|export)\b[^'"]*?)from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)) {
      const to = resolve(file, m[2] ?? m[3]);
      if (!to || !to.startsWith(SRC)) continue;
      targets.add(to);
      const typeOnly = m[1] !== undefined && /^(?:import|export)\s+type\b/.test(m[1]);
      if (!typeOnly && !to.endsWith('.d.ts')) valueTargets.add(to);
    }
    edges.set(file, targets);
    values.set(file, valueTargets);
  }
  edges.values = values;
  return edges;
}

/**
 * The layers, bottom first: a module may import its own layer and the ones
 * below it, never one above (type imports included, but for the exceptions
 * listed in docs/architecture.md). A path not listed sits at the top.
 */
const LAYERS = [
  ['package-root.ts', 'native/', 'audio/', 'domain-errors.ts', 'admin-api.ts', 'log.ts', 'net/'],
  ['store/', 'metrics.ts'],
  ['stt/'],
  ['host/', 'config.ts'],
  ['http/', 'jobs/'],
  ['routes/'],
];
const layerOf = (rel) => {
  const i = LAYERS.findIndex((prefixes) => prefixes.some((p) => rel === p || rel.startsWith(p)));
  return i < 0 ? LAYERS.length : i;
};
/**
 * The one kind of upward import allowed (named in docs/architecture.md): a
 * type-only import of the composition's `Services`, so a module can name the
 * few parts it takes as Pick<Services, ...> instead of taking them all.
 */
const allowedUp = (to, typeOnly) => typeOnly && to === 'services.ts';

/** Imports from a lower layer to a higher one. */
function upward(edges) {
  const out = [];
  for (const [from, targets] of edges) {
    const f = path.relative(SRC, from);
    for (const to of targets) {
      const t = path.relative(SRC, to);
      const typeOnly = !edges.values.get(from).has(to);
      if (layerOf(t) > layerOf(f) && !allowedUp(t, typeOnly)) out.push(`${f} -> ${t}${typeOnly ? ' (type)' : ''}`);
    }
  }
  return out.sort();
}

/** Strongly connected components of more than one module (Tarjan). */
function cycles(edges) {
  let index = 0;
  const idx = new Map(), low = new Map(), stack = [], on = new Set(), out = [];
  const visit = (v) => {
    idx.set(v, index); low.set(v, index); index++; stack.push(v); on.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!idx.has(w)) { visit(w); low.set(v, Math.min(low.get(v), low.get(w))); }
      else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const comp = [];
      let w;
      do { w = stack.pop(); on.delete(w); comp.push(w); } while (w !== v);
      if (comp.length > 1 || (edges.get(v) ?? new Set()).has(v)) out.push(comp.map((f) => path.relative(SRC, f)).sort());
    }
  };
  for (const v of edges.keys()) if (!idx.has(v)) visit(v);
  return out;
}

module.exports = { graph, cycles, upward, SRC };

if (require.main === module) {
  const g = graph();
  const found = cycles(g);
  const up = upward(g);
  for (const c of found) console.log(`circle: ${c.join(' <-> ')}`);
  for (const u of up) console.log(`up: ${u}`);
  process.exitCode = found.length || up.length ? 1 : 0;
}
