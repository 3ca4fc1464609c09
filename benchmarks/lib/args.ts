// Command-line options of the benchmarks and studies, read one way: a flag
// given without its value is an error, not an option set to "undefined" or
// to the next flag.

/** The value after `flag`, or undefined when the flag is absent; throws when it is given without one. */
export function optionValue(args: string[], flag: string): string | undefined {
  const at = args.indexOf(flag);
  if (at < 0) return undefined;
  const value = args[at + 1];
  if (value === undefined || value.startsWith('--')) throw new Error(`${flag} needs a value`);
  return value;
}

/** A number after `flag`, or `fallback` when the flag is absent; throws when the value is not a number. */
export function numberOption(args: string[], flag: string, fallback: number): number {
  const value = optionValue(args, flag);
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new Error(`${flag} needs a number, not ${value}`);
  return n;
}

/**
 * The report name's suffix from `--name` ("-panel-loop"), or "" without it:
 * a second run on one day then goes beside the first's report, not over it.
 * Letters, digits, dots and dashes only: the name becomes part of a file name.
 */
export function reportSuffix(args: string[]): string {
  const name = optionValue(args, '--name');
  if (name === undefined) return '';
  if (!/^[\w.-]+$/.test(name) || name.startsWith('.')) throw new Error(`--name ${name}: letters, digits, dots and dashes only`);
  return `-${name}`;
}

/** The `--name` flag as a report's command line echoes it (" --name panel-loop"), or "" without one. */
export function nameFlag(suffix: string): string {
  return suffix ? ` --name ${suffix.slice(1)}` : '';
}
