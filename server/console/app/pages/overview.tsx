import { useEffect, useState } from 'preact/hooks';
import type { CallStats } from '../../../../shared/schemas/admin.ts';
import { api, withQuery } from '../api.ts';
import { CallsChart } from '../chart.tsx';
import { ErrorNote, Loading, Outcome, PageTitle, useLoad } from '../ui.tsx';

const WINDOWS = [
  { minutes: 15, label: '15 minutes' },
  { minutes: 60, label: 'hour' },
  { minutes: 360, label: '6 hours' },
  { minutes: 1440, label: '24 hours' },
] as const;

const REFRESH_MS = 10_000;

const ms = (value: number | null) => (value === null ? '—' : `${Math.round(value)} ms`);

/** The overview: calls per minute by outcome, p50/p99 duration and the top errors of a recent window. */
export function OverviewPage() {
  const [windowMinutes, setWindowMinutes] = useState<number>(60);
  const stats = useLoad(
    () => api<CallStats>('GET', withQuery('/admin/calls/stats', { minutes: windowMinutes })),
    [windowMinutes],
  );
  useEffect(() => {
    const timer = setInterval(stats.reload, REFRESH_MS);
    return () => clearInterval(timer);
  }, [stats.reload]);
  const data = stats.data;
  const label = WINDOWS.find((option) => option.minutes === windowMinutes)?.label ?? '';

  return (
    <>
      <PageTitle title="Overview">
        <label for="overview-window">Last</label>
        <select
          id="overview-window"
          value={String(windowMinutes)}
          onChange={(event) => setWindowMinutes(Number(event.currentTarget.value))}
        >
          {WINDOWS.map((option) => (
            <option key={option.minutes} value={String(option.minutes)}>
              {option.label}
            </option>
          ))}
        </select>
      </PageTitle>
      <ErrorNote error={stats.error} />
      {data ? (
        <>
          <section class="tiles" aria-label={`The last ${label}`}>
            <div class="tile">
              <div class="tile-label">Calls</div>
              <div class="tile-value" data-testid="total-calls">
                {data.total}
              </div>
            </div>
            <div class="tile">
              <div class="tile-label">Failed</div>
              <div class={`tile-value ${data.errors > 0 ? 'bad' : ''}`} data-testid="failed-calls">
                {data.errors}
                {data.total > 0 ? (
                  <span class="tile-sub"> ({((100 * data.errors) / data.total).toFixed(1)} %)</span>
                ) : null}
              </div>
            </div>
            <div class="tile">
              <div class="tile-label">p50 duration</div>
              <div class="tile-value" data-testid="p50">
                {ms(data.p50Ms)}
              </div>
            </div>
            <div class="tile">
              <div class="tile-label">p99 duration</div>
              <div class="tile-value" data-testid="p99">
                {ms(data.p99Ms)}
              </div>
            </div>
          </section>
          <section class="card" aria-labelledby="chart-title">
            <h2 id="chart-title">Calls per minute, by outcome</h2>
            {data.total === 0 ? (
              <p class="empty">No tool call in the last {label}.</p>
            ) : (
              <CallsChart minutes={data.minutes} title={`Calls per minute over the last ${label}`} />
            )}
          </section>
          <section class="card" aria-labelledby="errors-title">
            <h2 id="errors-title">Top errors</h2>
            {data.topErrors.length === 0 ? (
              <p class="empty">No failed call in the last {label}.</p>
            ) : (
              <table class="top-errors">
                <thead>
                  <tr>
                    <th scope="col">Outcome</th>
                    <th scope="col" class="num">
                      Calls
                    </th>
                    <th scope="col">
                      <span class="sr-only">In the call log</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {data.topErrors.map((error) => (
                    <tr key={error.outcome}>
                      <th scope="row">
                        <Outcome outcome={error.outcome} />
                      </th>
                      <td class="num">{error.count}</td>
                      <td>
                        <a href={withQuery('/console/calls', { outcome: error.outcome })}>see the calls</a>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </section>
        </>
      ) : stats.loading ? (
        <Loading what="the overview" />
      ) : null}
    </>
  );
}
