import { SpanKind, type Tracer } from '@opentelemetry/api';
import type {
  SqlDriverAdapter,
  SqlDriverAdapterFactory,
  SqlQuery,
  Transaction,
} from '@prisma/driver-adapter-utils';
import { inSpan } from '../observe/tracing.ts';

/**
 * Statements this process sent to its database (every `queryRaw`/`executeRaw` Prisma ran,
 * transactions included), exported as `toolgate_db_queries_total`. It is how the bench shows that a
 * warm tool call runs no query; per process, not per server, which only matters in tests.
 */
let queries = 0;

export function dbQueryCount(): number {
  return queries;
}

function counting<T extends SqlDriverAdapter | Transaction>(queryable: T, tracer: Tracer | undefined): T {
  return new Proxy(queryable, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      if (name === 'queryRaw' || name === 'executeRaw')
        return (...args: unknown[]) => {
          queries += 1;
          if (!tracer) return value.apply(target, args);
          const sql = (args[0] as SqlQuery).sql;
          return inSpan(tracer, operationOf(sql), SpanKind.CLIENT, statementAttributes(sql), () =>
            value.apply(target, args),
          );
        };
      if (name === 'startTransaction')
        return async (...args: unknown[]) => counting(await value.apply(target, args), tracer);
      return value.bind(target);
    },
  });
}

/** The statement's first word (SELECT, INSERT, …): the span's name and `db.operation.name`. */
function operationOf(sql: string): string {
  return /^\s*([A-Za-z]+)/.exec(sql)?.[1]?.toUpperCase() ?? 'QUERY';
}

/**
 * A statement's span attributes, after the database semantic conventions. Prisma sends every
 * value as a bind parameter, so the statement's text holds placeholders ($1…), never a value.
 */
function statementAttributes(sql: string) {
  return { 'db.system.name': 'postgresql', 'db.operation.name': operationOf(sql), 'db.query.text': sql };
}

/**
 * The adapter factory, with every statement of every connection and transaction counted, and,
 * when a tracer is given, each one a span (a child of the request or call that sent it).
 */
export function countQueries(factory: SqlDriverAdapterFactory, tracer?: Tracer): SqlDriverAdapterFactory {
  return new Proxy(factory, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (name === 'connect' && typeof value === 'function')
        return async () => counting(await value.apply(target, []), tracer);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
