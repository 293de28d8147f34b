import type { SqlDriverAdapter, SqlDriverAdapterFactory, Transaction } from '@prisma/driver-adapter-utils';

/**
 * Statements this process sent to its database (every `queryRaw`/`executeRaw` Prisma ran,
 * transactions included), exported as `toolgate_db_queries_total`. It is how the bench shows that a
 * warm tool call runs no query; per process, not per server, which only matters in tests.
 */
let queries = 0;

export function dbQueryCount(): number {
  return queries;
}

function counting<T extends SqlDriverAdapter | Transaction>(queryable: T): T {
  return new Proxy(queryable, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (typeof value !== 'function') return value;
      if (name === 'queryRaw' || name === 'executeRaw')
        return (...args: unknown[]) => {
          queries += 1;
          return value.apply(target, args);
        };
      if (name === 'startTransaction')
        return async (...args: unknown[]) => counting(await value.apply(target, args));
      return value.bind(target);
    },
  });
}

/** The adapter factory, with every statement of every connection and transaction counted. */
export function countQueries(factory: SqlDriverAdapterFactory): SqlDriverAdapterFactory {
  return new Proxy(factory, {
    get(target, name, receiver) {
      const value = Reflect.get(target, name, receiver);
      if (name === 'connect' && typeof value === 'function')
        return async () => counting(await value.apply(target, []));
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
