import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'prisma/config';

// Prisma's native schema engine cannot be downloaded here (nor in CI): the CLI runs our Node shim,
// which drives the WebAssembly schema engine through a driver adapter (PGlite or pg).
const root = path.dirname(fileURLToPath(import.meta.url));
process.env.PRISMA_SCHEMA_ENGINE_BINARY ??= path.join(root, 'scripts', 'prisma-schema-engine.mjs');

// Same default and same meaning as the server (CONTRACT §7). A relative PGlite folder is resolved
// against the caller's working directory here, because the CLI starts the engine in another one.
function datasourceUrl(raw: string): string {
  if (!raw.startsWith('pglite:') || raw === 'pglite:memory') return raw;
  return `pglite:${path.resolve(raw.slice('pglite:'.length))}`;
}

export default defineConfig({
  schema: path.join(root, 'prisma', 'schema.prisma'),
  migrations: { path: path.join(root, 'prisma', 'migrations') },
  datasource: {
    url: datasourceUrl(process.env.DATABASE_URL || 'pglite:./.toolgate/db'),
    ...(process.env.SHADOW_DATABASE_URL ? { shadowDatabaseUrl: process.env.SHADOW_DATABASE_URL } : {}),
  },
});
