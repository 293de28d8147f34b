import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client';

/** Per-server registry (not prom-client's global one), so several servers can share a process. */
export function createMetrics() {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'toolgate_' });
  const requests = new Counter({
    name: 'toolgate_http_requests_total',
    help: 'HTTP requests by route template, method and status',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'toolgate_http_request_duration_seconds',
    help: 'HTTP request duration by route template',
    labelNames: ['route'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  return {
    registry,
    observe(route: string, method: string, status: number, seconds: number): void {
      requests.inc({ route, method, status: String(status) });
      duration.observe({ route }, seconds);
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
