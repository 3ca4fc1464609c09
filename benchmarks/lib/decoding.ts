// How reports name a decoding: one spelling for every table and command line,
// so a row of one report reads as the same row of another.

/** "greedy" for beam 1, "beam N" otherwise. */
export function decodingName(beam: number): string {
  return beam === 1 ? 'greedy' : `beam ${beam}`;
}
