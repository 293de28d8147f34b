/** Small statistics for the corpus report. */

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

export function ms(value: number): string {
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${value.toFixed(1)} ms`;
}

export function pct(part: number, whole: number): string {
  return whole === 0 ? '—' : `${((100 * part) / whole).toFixed(1)} %`;
}

/** A skip reason with its specifics (quoted names, numbers) folded, so reasons group. */
export function reasonKind(reason: string): string {
  return reason.replace(/"[^"]*"/g, '"…"').replace(/\d+/g, 'N');
}
