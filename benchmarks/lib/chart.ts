// A small SVG strip chart: every request's latency under load, per mix and contender.
import { median } from './stats';

export interface ChartRow {
  label: string;
  points: { ms: number; long: boolean }[];
}

const SHORT = '#0b5cad';
const LONG = '#d97706';

export function chartSvg(rows: ChartRow[]): string {
  const max = Math.max(1, ...rows.flatMap((r) => r.points.map((p) => p.ms)));
  const width = 960, left = 380, rowH = 22, top = 30, plotW = width - left - 20;
  const height = top + rows.length * rowH + 40;
  const x = (ms: number) => left + (ms / max) * plotW;
  const esc = (s: string) => s.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="11">`,
    `<text x="${left}" y="18" font-weight="bold">Latency per request (ms): blue = clip of 30 s or less, orange = longer; tick = median of all</text>`,
  ];
  rows.forEach((r, i) => {
    const y = top + i * rowH + rowH / 2;
    parts.push(`<text x="${left - 8}" y="${y + 4}" text-anchor="end">${esc(r.label)}</text>`);
    for (const p of r.points) parts.push(`<circle cx="${x(p.ms).toFixed(1)}" cy="${y}" r="3" fill="${p.long ? LONG : SHORT}" opacity="0.7"/>`);
    if (r.points.length) {
      const m = x(median(r.points.map((p) => p.ms)));
      parts.push(`<line x1="${m.toFixed(1)}" x2="${m.toFixed(1)}" y1="${y - 7}" y2="${y + 7}" stroke="#111" stroke-width="2"/>`);
    }
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
