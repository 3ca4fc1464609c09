// Where benchmark reports go and how they are written:
// benchmarks/results/<kind>-<date>[-variant].{md,json,svg}, one scheme for
// every script (`npm run bench`'s kind is `bench`). The directory keeps the
// reports docs/performance.md cites; git keeps the earlier ones.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../../fixtures';

export const RESULTS_DIR = path.join(ROOT, 'benchmarks', 'results');

/** Today (UTC) as YYYY-MM-DD: the date in a report's name and title. */
export const today = (): string => new Date().toISOString().slice(0, 10);

/** Writes `<name>.md` (and `<name>.json` when given) into benchmarks/results, prints the report and where it went. */
export function saveReport(name: string, md: string, json?: unknown): string {
  mkdirSync(RESULTS_DIR, { recursive: true });
  if (json !== undefined) writeFileSync(path.join(RESULTS_DIR, `${name}.json`), JSON.stringify(json, null, 2));
  const out = path.join(RESULTS_DIR, `${name}.md`);
  writeFileSync(out, md);
  process.stdout.write(`${md}\nreport: ${out}\n`);
  return out;
}
