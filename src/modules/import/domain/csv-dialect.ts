/** Delimiters a CSV file may use; the first line decides (spreadsheet programs write `;` in many locales). */
export const CSV_DELIMITERS = [',', ';', '\t', '|'] as const;

/**
 * The delimiter that occurs most often outside quotes in the first line of
 * `sample`; a comma when none occurs (a one-column file) or on a tie with it.
 */
export function sniffDelimiter(sample: string): string {
  const counts = new Map<string, number>(CSV_DELIMITERS.map((d) => [d, 0]));
  let quoted = false;
  for (const ch of sample) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && (ch === '\n' || ch === '\r')) break;
    else if (!quoted && counts.has(ch)) counts.set(ch, counts.get(ch)! + 1);
  }
  let best = ',';
  for (const [delimiter, count] of counts) if (count > counts.get(best)!) best = delimiter;
  return best;
}
