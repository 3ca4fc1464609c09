// A small SVG strip chart: short-clip latencies under load, per model and contender.
import { percentile } from './stats';

interface Result {
  shape: string;
  load: Record<string, { contender: string; shortMs: number[] } | null>;
}

const COLOURS = ['#0b5cad', '#d97706', '#6b7280'];

export function chartSvg(results: Result[]): string {
  const rows = results.flatMap((r) => Object.values(r.load).filter((l): l is NonNullable<typeof l> => !!l).map((l, i) => ({ label: `${r.shape} · ${l.contender}`, xs: l.shortMs, colour: COLOURS[i % 3] })));
  const max = Math.max(1, ...rows.flatMap((r) => r.xs));
  const width = 860, left = 260, rowH = 28, top = 30, plotW = width - left - 20;
  const height = top + rows.length * rowH + 40;
  const x = (ms: number) => left + (ms / max) * plotW;
  const esc = (s: string) => s.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<text x="${left}" y="18" font-weight="bold">5-s clip latency under load (ms): dots are requests, bar is p50–p95</text>`,
  ];
  rows.forEach((r, i) => {
    const y = top + i * rowH + rowH / 2;
    parts.push(`<text x="${left - 8}" y="${y + 4}" text-anchor="end">${esc(r.label)}</text>`);
    parts.push(`<line x1="${x(percentile(r.xs, 50))}" x2="${x(percentile(r.xs, 95))}" y1="${y}" y2="${y}" stroke="${r.colour}" stroke-width="8" opacity="0.35"/>`);
    for (const v of r.xs) parts.push(`<circle cx="${x(v).toFixed(1)}" cy="${y}" r="3" fill="${r.colour}"/>`);
  });
  const axisY = top + rows.length * rowH + 10;
  parts.push(`<line x1="${left}" x2="${left + plotW}" y1="${axisY}" y2="${axisY}" stroke="#333"/>`);
  for (let k = 0; k <= 4; k++) {
    const v = (max * k) / 4;
    parts.push(`<text x="${x(v)}" y="${axisY + 16}" text-anchor="middle">${Math.round(v)}</text>`);
  }
  parts.push('</svg>');
  return parts.join('\n');
}
