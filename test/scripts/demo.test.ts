/** `npm run demo` end to end: it must succeed, tell each step, and leave nothing behind. */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TSX = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

it('runs the whole agent loop, auth_required then reauth_required, and exits 0', {
  timeout: 150_000,
}, async () => {
  const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>(
    (resolve) => {
      execFile(
        process.execPath,
        ['--import', TSX, path.join(ROOT, 'scripts/demo.ts')],
        { cwd: ROOT, timeout: 140_000 },
        (error, out, err) =>
          resolve({ code: error ? Number(error.code ?? -1) : 0, stdout: out, stderr: err }),
      );
    },
  );
  expect(stderr).toBe('');
  expect(code, stdout).toBe(0);
  expect(stdout).toContain('[1/9] Starting the pieces');
  expect(stdout).toContain('← 401 auth_required — the user has not authorized app "demo"');
  expect(stdout).toContain("and sends the browser to the agent's page: http://127.0.0.1:");
  expect(stdout).toContain('/oauth/done?status=success');
  expect(stdout).toContain('the upstream API ran exactly once, for the retry');
  expect(stdout).toContain('← 401 auth_required, reauth_required: true');
  expect(stdout.match(/with the same idempotency key/g)).toHaveLength(2);
  // The upstream answers by token: ada gets ada's profile, and grace (step 8) her own, never Ada's.
  expect(stdout.match(/✓ ← 200 \{"id":"ada","name":"Ada"\}/g)).toHaveLength(2);
  expect(stdout).toContain(
    '[8/9] An MCP client (official SDK, 2026-07-28) uses the same tools for user "grace"',
  );
  expect(stdout).toContain('← input required: URL elicitation');
  expect(stdout).toMatch(/\/oauth\/complete\?flow=ost_[a-z0-9]{4}… \(200\)/);
  expect(stdout).toContain('the upstream ran once');
  const step8 = stdout.slice(stdout.indexOf('[8/9]'), stdout.indexOf('[9/9]'));
  expect(step8).toContain('← result {"id":"grace","name":"Grace"} (structuredContent + text)');
  expect(step8).toContain('"grace" got their own profile, never another user\'s');
  expect(step8).not.toContain('Ada');
  expect(stdout).toContain('[9/9] Stopping everything');
  expect(stdout.trimEnd().endsWith('Every step worked.')).toBe(true);
  const folder = /in (\/\S+)\/db\n/.exec(stdout)?.[1];
  expect(folder).toBeDefined();
  expect(existsSync(folder as string)).toBe(false);
});
