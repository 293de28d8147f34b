import {
  type Attributes,
  context,
  type Span,
  type SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from '@opentelemetry/api';
import type { Logger } from 'pino';

/**
 * OpenTelemetry traces (docs/reference.md "Traces"), on when OTEL_EXPORTER_OTLP_ENDPOINT is set.
 * Off, the SDK is never loaded (only the API's types and a few constants are), and every place that
 * would make a span tests one `undefined` and goes on: the hot path does not change.
 *
 * The provider is this server's own, not registered as the process's global one: tests run
 * several servers in one process, each with its receiver. Spans find their parent through the
 * active context, which needs the AsyncLocalStorage context manager, set once per process (the
 * API keeps the first one set).
 */
export interface Tracing {
  tracer: Tracer;
  /** Sends every span ended so far (tests; close). */
  flush(): Promise<void>;
  shutdown(): Promise<void>;
}

export async function startTracing(
  endpoint: string | undefined,
  logger: Logger,
): Promise<Tracing | undefined> {
  if (endpoint === undefined) return undefined;
  const [
    { NodeTracerProvider, BatchSpanProcessor },
    { OTLPTraceExporter },
    { resourceFromAttributes },
    hooks,
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/context-async-hooks'),
  ]);
  context.setGlobalContextManager(new hooks.AsyncLocalStorageContextManager().enable());
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'toolgate', 'service.version': '0.1.0' }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter({ url: `${endpoint}/v1/traces` }))],
  });
  logger.info({ endpoint }, 'tracing: OpenTelemetry spans go to the OTLP/HTTP receiver');
  return {
    tracer: provider.getTracer('toolgate', '0.1.0'),
    flush: () => provider.forceFlush(),
    shutdown: () => provider.shutdown(),
  };
}

/**
 * Runs `fn` inside a new span made active (its children find it), ended when `fn` settles; without
 * a tracer, just runs `fn`. A throw marks the span as an error by the error's name only: messages
 * and stacks may quote what the span must not carry.
 */
export async function inSpan<T>(
  tracer: Tracer | undefined,
  name: string,
  kind: SpanKind,
  attributes: Attributes,
  fn: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!tracer) return fn(undefined);
  return tracer.startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      span.setAttribute('error.type', error instanceof Error ? error.name : 'Error');
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Runs `fn` with `span` as the active span (for work its children do beyond one function). */
export function withActiveSpan<T>(span: Span, fn: () => T): T {
  return context.with(trace.setSpan(context.active(), span), fn);
}
