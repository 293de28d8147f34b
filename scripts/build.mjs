// `npm run build` (also run by `postinstall`): generates the Prisma client into
// server/db/generated, builds the web console into dist/console/ (scripts/build-console.mjs),
// and bundles the server into dist/server/ so that
// `npm start` is one plain `node` process that loads already-built code, writes nothing into the
// installation and receives its signals itself. Plain JavaScript: it runs before anything is built.
//
// Pure-JavaScript packages are bundled too: resolving and loading hundreds of files from
// node_modules cost about 150 ms of every start. Packages that find files of their own at run time
// (WebAssembly, native addons, the Prisma runtime, Swagger UI's assets) stay in node_modules; see
// EXTERNAL. Dynamic imports become chunks, so optional parts (the Azure SDK, MCP, YAML and Swagger
// 2.0 reading, the OpenAPI generator) load only when used.
//
// Files are found at run time relative to the bundle, exactly as relative to the sources, because
// dist/server/ is as deep as server/<area>/: `../../prisma/migrations/` (server/db/migrate.ts)
// resolves to the repository's prisma/ from either. Worker threads are started from
// `new URL('./<name>.mjs', import.meta.url)`, so each worker is built as an entry of that name.
import { execFileSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { buildConsole } from './build-console.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const outdir = `${root}dist/server`;

/** Worker threads: source → the `.mjs` name the code starts them by. */
const WORKERS = [{ in: 'server/catalog/compile-worker.ts', out: 'compile-worker' }];

/** Loaded from node_modules at run time, never bundled (see above). */
const EXTERNAL = [
  '@electric-sql/pglite', // WebAssembly and data files beside its modules
  'pglite-prisma-adapter', // must share that one PGlite module
  '@prisma/*', // the client runtime and its query-compiler WebAssembly
  '@node-rs/*', // native addon (argon2)
  'pg', // optional require of pg-native
  '@azure/*', // large and optional (KMS=azure only)
  'swagger-ui-dist', // served as files
];

/**
 * External CommonJS packages the server imports by name, loaded with require() instead: Node's ESM
 * loader first scans a CommonJS file for its export names (cjs-module-lexer), which cost about
 * 130 ms of every start for Prisma's 200 KB client runtime alone, against 60 ms to require it
 * (issue 23, item 13). The same file either way (Node resolves both to the CommonJS build).
 */
const REQUIRED = ['@prisma/client/runtime/client', '@node-rs/argon2'];

/** Turns `import … from '<one of REQUIRED>'` into a require() through the banner's `require`. */
const requireCommonJs = {
  name: 'require-commonjs',
  setup(build) {
    const filter = new RegExp(`^(${REQUIRED.map((name) => name.replace(/[/.]/g, '\\$&')).join('|')})$`);
    build.onResolve({ filter }, (args) =>
      args.namespace === 'require-commonjs'
        ? { path: args.path, external: true }
        : { path: args.path, namespace: 'require-commonjs' },
    );
    build.onLoad({ filter: /.*/, namespace: 'require-commonjs' }, (args) => ({
      contents: `module.exports = require(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

const started = performance.now();
const prisma = `${root}node_modules/.bin/prisma`;
// --bundle-only: tests rebuild the bundle without rewriting the generated client under other runs.
const bundleOnly = process.argv.includes('--bundle-only');
if (!bundleOnly && existsSync(prisma)) {
  try {
    execFileSync(prisma, ['generate'], { cwd: root, stdio: 'pipe' });
  } catch (error) {
    process.stderr.write(`${error.stdout ?? ''}${error.stderr ?? ''}toolgate: prisma generate failed\n`);
    process.exit(1);
  }
} else if (!existsSync(`${root}server/db/generated/client.ts`)) {
  // An install without devDependencies cannot generate: build where they are installed, then prune.
  process.stderr.write(
    'toolgate: build needs the prisma CLI (a devDependency): run npm install, then npm run build\n',
  );
  process.exit(1);
}
rmSync(outdir, { recursive: true, force: true });
const built = await build({
  absWorkingDir: root,
  entryPoints: [
    { in: 'server/main.ts', out: 'main' },
    ...WORKERS.filter((worker) => existsSync(`${root}${worker.in}`)),
  ],
  outdir,
  outExtension: { '.js': '.mjs' },
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20.19',
  external: EXTERNAL,
  plugins: [requireCommonJs],
  // Bundled CommonJS packages call require(); ESM output has none unless given one.
  banner: {
    js: "import { createRequire as __toolgateRequire } from 'node:module'; const require = __toolgateRequire(import.meta.url);",
  },
  sourcemap: 'linked',
  // The maps point into the sources instead of copying them: --enable-source-maps reads every map
  // at start-up, so smaller maps start faster.
  sourcesContent: false,
  logLevel: 'warning',
}).catch(() => undefined); // esbuild has printed the errors
if (!built) {
  process.stderr.write('toolgate: build failed\n');
  process.exit(1);
}
// The web console (scripts/build-console.mjs), into dist/console. --bundle-only leaves a console
// already built alone: tests that rebuild the server bundle run beside tests serving the console.
try {
  if (!bundleOnly || !existsSync(`${root}dist/console/index.html`)) await buildConsole(root);
} catch {
  process.stderr.write('toolgate: console build failed\n'); // esbuild has printed the errors
  process.exit(1);
}
process.stdout.write(
  `toolgate: built dist/server and dist/console in ${Math.round(performance.now() - started)} ms (npm start runs it)\n`,
);
