// The web console's build (docs/reference.md "Console"), run by scripts/build.mjs at every
// install: Preact sources in server/console/app → dist/console/index.html and
// dist/console/assets/<name>-<hash>.{js,css}, which the server serves at /console. Assets are
// named by their content's hash, so the server lets browsers cache them for a year; the page
// names the current ones. The same esbuild as the server bundle: no second bundler, no dev server
// to keep (the server itself serves the console). Plain JavaScript: it runs before anything is built.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

/** Builds the console into `${root}dist/console`; answers the page's asset names. */
export async function buildConsole(root) {
  const source = `${root}server/console/app`;
  const outdir = `${root}dist/console`;
  rmSync(outdir, { recursive: true, force: true });
  const result = await build({
    absWorkingDir: root,
    entryPoints: [`${source}/main.tsx`],
    outdir: `${outdir}/assets`,
    entryNames: '[name]-[hash]',
    assetNames: '[name]-[hash]',
    bundle: true,
    format: 'esm',
    platform: 'browser',
    // Browsers of the last few years: ES2022 syntax runs unchanged in each.
    target: ['es2022', 'chrome109', 'firefox115', 'safari16'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    minify: true,
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
    define: { 'process.env.NODE_ENV': '"production"' },
  });
  const [entry] = Object.entries(result.metafile.outputs).filter(([, output]) => output.entryPoint);
  if (!entry?.[1].cssBundle) throw new Error('the console build produced no script or stylesheet');
  const js = path.basename(entry[0]);
  const css = path.basename(entry[1].cssBundle);
  const page = readFileSync(`${source}/index.html`, 'utf8').replace('{{js}}', js).replace('{{css}}', css);
  writeFileSync(`${outdir}/index.html`, page);
  return { js, css };
}
