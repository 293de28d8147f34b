/**
 * Calls per minute, stacked by outcome: an SVG drawn by Preact itself. A chart library was weighed
 * (uPlot draws on a canvas, Chart.js is ten times this page's size); both would need the stacking
 * done by hand all the same, and neither gives each bar a text a screen reader can read. Here every
 * segment is an element with its own <title>, the figure has a summary, and the CSP needs nothing
 * (SVG presentation attributes are not styles).
 */
import type { CallStats } from '../../../shared/schemas/admin.ts';

/** A minute of GET /admin/calls/stats: its calls by outcome. */
export type Minute = CallStats['minutes'][number];

/** `ok` first, then the errors most frequent first: the stack's order and the legend's. */
export function outcomeOrder(minutes: Minute[]): string[] {
  const totals = new Map<string, number>();
  for (const minute of minutes)
    for (const [outcome, n] of Object.entries(minute.counts))
      totals.set(outcome, (totals.get(outcome) ?? 0) + n);
  const errors = [...totals.entries()]
    .filter(([outcome]) => outcome !== 'ok')
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([outcome]) => outcome);
  return totals.has('ok') ? ['ok', ...errors] : errors;
}

/** Distinct hues for errors, none of them the green of `ok`. */
const ERROR_COLORS = ['#d64545', '#e8883a', '#9b59b6', '#c2185b', '#8d6e63', '#5c6bc0', '#f4b400', '#607d8b'];

export function colorOf(outcome: string, order: string[]): string {
  if (outcome === 'ok') return '#2e9e5b';
  const index = order.filter((name) => name !== 'ok').indexOf(outcome);
  return ERROR_COLORS[index % ERROR_COLORS.length] as string;
}

const timeOfDay = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });

/** A round number of calls for the axis's top, at least the busiest minute. */
function niceMax(value: number): number {
  if (value <= 5) return 5;
  const magnitude = 10 ** Math.floor(Math.log10(value));
  for (const step of [1, 2, 2.5, 5, 10]) if (step * magnitude >= value) return step * magnitude;
  return 10 * magnitude;
}

export function CallsChart({ minutes, title }: { minutes: Minute[]; title: string }) {
  const order = outcomeOrder(minutes);
  const width = 960;
  const height = 240;
  const left = 40;
  const bottom = 22;
  const plotHeight = height - bottom - 8;
  const totals = minutes.map((minute) => Object.values(minute.counts).reduce((a, b) => a + b, 0));
  const top = niceMax(Math.max(0, ...totals));
  const slot = (width - left) / Math.max(1, minutes.length);
  const barWidth = Math.max(1, slot * 0.8);
  const y = (n: number) => 8 + plotHeight - (n / top) * plotHeight;
  const labelEvery = Math.max(1, Math.ceil(minutes.length / 8));
  const all = totals.reduce((a, b) => a + b, 0);

  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${width} ${height}`}
        role="img"
        aria-label={`${title}: ${all} calls over ${minutes.length} minutes, busiest minute ${Math.max(0, ...totals)}`}
      >
        {[0, Math.round(top / 2), top].map((value) => (
          <g key={value} class="grid">
            <line x1={left} x2={width} y1={y(value)} y2={y(value)} />
            <text x={left - 6} y={y(value) + 4} text-anchor="end">
              {value}
            </text>
          </g>
        ))}
        {minutes.map((minute, i) => {
          let base = 0;
          const x = left + i * slot + (slot - barWidth) / 2;
          return (
            <g key={minute.at}>
              {order.map((outcome) => {
                const n = minute.counts[outcome] ?? 0;
                if (n === 0) return null;
                const rect = (
                  <rect
                    key={outcome}
                    class="bar"
                    data-outcome={outcome}
                    x={x}
                    width={barWidth}
                    y={y(base + n)}
                    height={y(base) - y(base + n)}
                    fill={colorOf(outcome, order)}
                  >
                    <title>{`${timeOfDay.format(new Date(minute.at))}: ${n} × ${outcome}`}</title>
                  </rect>
                );
                base += n;
                return rect;
              })}
              {i % labelEvery === 0 ? (
                <text class="tick" x={x + barWidth / 2} y={height - 6} text-anchor="middle">
                  {timeOfDay.format(new Date(minute.at))}
                </text>
              ) : null}
            </g>
          );
        })}
      </svg>
      <figcaption>
        <ul class="legend">
          {order.map((outcome) => (
            <li key={outcome}>
              <svg width="12" height="12" aria-hidden="true">
                <rect width="12" height="12" rx="2" fill={colorOf(outcome, order)} />
              </svg>{' '}
              {outcome}
            </li>
          ))}
        </ul>
      </figcaption>
    </figure>
  );
}
