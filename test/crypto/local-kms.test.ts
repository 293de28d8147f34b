import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createKekFileIfAbsent } from '../../server/crypto/kms/kek-file.ts';
import { KmsConfigError } from '../../server/crypto/kms/kms.ts';
import { createLocalKms } from '../../server/crypto/kms/local.ts';
import { errorShape, rejectionOf } from './kms-doubles.ts';

const LOCAL_TS = fileURLToPath(new URL('../../server/crypto/kms/local.ts', import.meta.url));

/** The fingerprint computed independently of the implementation. */
function expectedKeyId(kek: Buffer): string {
  const digest = createHash('sha256').update('toolgate/local-kek/fingerprint/v1\0').update(kek).digest('hex');
  return `local:${digest.slice(0, 16)}`;
}

/** Runs `script` in a separate Node process with tsx; `ready` resolves once it prints "ready". */
function startChild(script: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: path.dirname(fileURLToPath(import.meta.url)),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString('utf8');
    if (stdout.startsWith('ready\n')) markReady();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const done = new Promise<string>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (status) => {
      markReady();
      if (status === 0) resolve(stdout);
      else reject(new Error(`child exited with ${status}: ${stderr}`));
    });
  });
  return { ready, done };
}

function configError(message: string) {
  return { name: 'KmsConfigError', code: 'KMS_CONFIG', message };
}

let dir: string;
beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolgate-kek-'));
});
afterEach(async () => {
  await fs.rm(dir, { recursive: true, force: true });
});

describe('KEK from LOCAL_KEK', () => {
  it('uses the given key, names it by fingerprint and leaves the file alone', async () => {
    const kek = randomBytes(32);
    const kekPath = path.join(dir, 'kek');
    const kms = await createLocalKms({ kek: kek.toString('base64'), kekPath });
    expect({ kind: kms.kind, keyId: kms.keyId }).toEqual({ kind: 'local', keyId: expectedKeyId(kek) });
    await expect(fs.stat(kekPath)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('accepts surrounding whitespace and missing padding', async () => {
    const kek = randomBytes(32);
    const base64 = kek.toString('base64');
    const padded = await createLocalKms({ kek: ` ${base64}\n`, kekPath: dir });
    const unpadded = await createLocalKms({ kek: base64.replace(/=$/, ''), kekPath: dir });
    expect([padded.keyId, unpadded.keyId]).toEqual([expectedKeyId(kek), expectedKeyId(kek)]);
  });

  it('wraps so that another instance with the same KEK unwraps', async () => {
    const kek = randomBytes(32).toString('base64');
    const dataKey = randomBytes(32);
    const one = await createLocalKms({ kek, kekPath: dir });
    const two = await createLocalKms({ kek, kekPath: dir });
    const { keyId, wrapped } = await one.wrapKey(dataKey);
    expect(keyId).toBe(one.keyId);
    expect(wrapped.length).toBe(60);
    expect(wrapped.includes(dataKey)).toBe(false);
    expect(await two.unwrapKey(keyId, wrapped)).toEqual(dataKey);
  });

  it.each([
    ['not base64 at all', 'not base64!'],
    ['31 bytes', randomBytes(31).toString('base64')],
    ['33 bytes', randomBytes(33).toString('base64')],
    ['64 bytes', randomBytes(64).toString('base64')],
    ['base64url alphabet', `${'-_'.repeat(21)}A=`],
    ['a non-canonical last character', `${'A'.repeat(42)}B=`],
    ['an empty string', ''],
  ])('rejects %s as a configuration error', async (_label, kek) => {
    const error = await rejectionOf(createLocalKms({ kek, kekPath: path.join(dir, 'kek') }));
    expect(error).toBeInstanceOf(KmsConfigError);
    expect({ ...errorShape(error), setting: (error as KmsConfigError).setting }).toEqual({
      ...configError(
        'LOCAL_KEK must be the base64 of exactly 32 bytes (generate one with: openssl rand -base64 32)',
      ),
      setting: 'LOCAL_KEK',
    });
  });
});

describe('KEK file', () => {
  it('generates a 32-byte key once, in a private file, and reads it on the next start', async () => {
    const kekPath = path.join(dir, 'state', 'kek');
    const first = await createLocalKms({ kekPath });
    const stat = await fs.stat(kekPath);
    const content = await fs.readFile(kekPath);
    expect({ mode: stat.mode & 0o777, size: stat.size }).toEqual({ mode: 0o600, size: 32 });
    expect(first.keyId).toBe(expectedKeyId(content));
    expect((await fs.stat(path.dirname(kekPath))).mode & 0o777).toBe(0o700);
    expect(await fs.readdir(path.dirname(kekPath))).toEqual(['kek']);

    const dataKey = randomBytes(32);
    const wrapped = await first.wrapKey(dataKey);
    const second = await createLocalKms({ kekPath });
    expect(second.keyId).toBe(first.keyId);
    expect(await second.unwrapKey(wrapped.keyId, wrapped.wrapped)).toEqual(dataKey);
    expect(await fs.readFile(kekPath)).toEqual(content);
  });

  it('ends with one key when many starts race in one process', async () => {
    const kekPath = path.join(dir, 'kek');
    const all = await Promise.all(Array.from({ length: 20 }, () => createLocalKms({ kekPath })));
    const onDisk = expectedKeyId(await fs.readFile(kekPath));
    expect(new Set(all.map((kms) => kms.keyId))).toEqual(new Set([onDisk]));
    expect(await fs.readdir(dir)).toEqual(['kek']);
  });

  it('ends with one key when separate processes start at once', async () => {
    const kekPath = path.join(dir, 'kek');
    const go = path.join(os.tmpdir(), `toolgate-kek-go-${process.pid}-${Date.now()}`);
    // Each process loads the module, says ready, then waits for the go file: they race for real.
    const script = `const { createLocalKms } = await import(${JSON.stringify(LOCAL_TS)});
      const { existsSync } = await import('node:fs');
      process.stdout.write('ready\\n');
      while (!existsSync(${JSON.stringify(go)})) await new Promise((resolve) => setTimeout(resolve, 1));
      process.stdout.write((await createLocalKms({ kekPath: ${JSON.stringify(kekPath)} })).keyId);`;
    const children = Array.from({ length: 6 }, () => startChild(script));
    try {
      await Promise.all(children.map((child) => child.ready));
      await fs.writeFile(go, '');
      const outputs = await Promise.all(children.map((child) => child.done));
      const onDisk = expectedKeyId(await fs.readFile(kekPath));
      expect(outputs).toEqual(Array.from({ length: 6 }, () => `ready\n${onDisk}`));
      expect(await fs.readdir(dir)).toEqual(['kek']);
    } finally {
      await fs.rm(go, { force: true });
    }
  }, 30_000);

  it('never replaces an existing KEK file', async () => {
    const kekPath = path.join(dir, 'kek');
    await createKekFileIfAbsent(kekPath);
    const first = await fs.readFile(kekPath);
    await createKekFileIfAbsent(kekPath);
    await Promise.all([createKekFileIfAbsent(kekPath), createKekFileIfAbsent(kekPath)]);
    expect(await fs.readFile(kekPath)).toEqual(first);
    expect(await fs.readdir(dir)).toEqual(['kek']);
  });

  it.each([
    [31, 'holds 31 bytes'],
    [33, 'holds 33 bytes'],
    [0, 'holds 0 bytes'],
  ])('refuses a file of %i bytes', async (size, problem) => {
    const kekPath = path.join(dir, 'kek');
    await fs.writeFile(kekPath, randomBytes(size), { mode: 0o600 });
    expect(errorShape(await rejectionOf(createLocalKms({ kekPath })))).toEqual(
      configError(`KEK file ${kekPath} ${problem}; a KEK file holds exactly 32`),
    );
  });

  it.each([0o644, 0o640, 0o604, 0o620])('refuses a file with mode %o', async (mode) => {
    const kekPath = path.join(dir, 'kek');
    await fs.writeFile(kekPath, randomBytes(32));
    await fs.chmod(kekPath, mode);
    expect(errorShape(await rejectionOf(createLocalKms({ kekPath })))).toEqual(
      configError(
        `KEK file ${kekPath} is accessible to group or others (mode 0${mode.toString(8)}); run chmod 600 ${kekPath}`,
      ),
    );
  });

  it('refuses a directory in place of the file', async () => {
    const kekPath = path.join(dir, 'kek');
    await fs.mkdir(kekPath, { mode: 0o700 });
    expect(errorShape(await rejectionOf(createLocalKms({ kekPath })))).toEqual(
      configError(`KEK file ${kekPath} is not a regular file`),
    );
  });

  it('reports a KEK path that cannot be used', async () => {
    const blocker = path.join(dir, 'blocker');
    await fs.writeFile(blocker, 'a file where a directory should be');
    const kekPath = path.join(blocker, 'kek');
    expect(errorShape(await rejectionOf(createLocalKms({ kekPath })))).toEqual(
      configError(`KEK file ${kekPath} cannot be opened (ENOTDIR)`),
    );
  });
});

describe('unwrapping', () => {
  it('names both KEKs when a data key was wrapped under another one', async () => {
    const one = await createLocalKms({ kek: randomBytes(32).toString('base64'), kekPath: dir });
    const other = await createLocalKms({ kek: randomBytes(32).toString('base64'), kekPath: dir });
    const { keyId, wrapped } = await other.wrapKey(randomBytes(32));
    expect(errorShape(await rejectionOf(one.unwrapKey(keyId, wrapped)))).toEqual({
      name: 'KmsKeyMismatchError',
      code: 'KMS_KEY_MISMATCH',
      message: `data key was wrapped by local KEK ${other.keyId}, but this server's local KEK is ${one.keyId}`,
    });
  });

  it('names the other KMS when the key id is not local', async () => {
    const kms = await createLocalKms({ kek: randomBytes(32).toString('base64'), kekPath: dir });
    const keyId = 'https://my-vault.vault.azure.net/keys/toolgate/0123456789abcdef0123456789abcdef';
    expect(errorShape(await rejectionOf(kms.unwrapKey(keyId, randomBytes(256))))).toEqual({
      name: 'KmsKeyMismatchError',
      code: 'KMS_KEY_MISMATCH',
      message: `data key was wrapped by an Azure Key Vault key, but this server's local KEK is ${kms.keyId}`,
    });
  });

  it('refuses a modified or short wrapped key', async () => {
    const kms = await createLocalKms({ kek: randomBytes(32).toString('base64'), kekPath: dir });
    const { keyId, wrapped } = await kms.wrapKey(randomBytes(32));
    const modified = Buffer.from(wrapped);
    modified[20] = (modified[20] as number) ^ 0x80;
    expect(errorShape(await rejectionOf(kms.unwrapKey(keyId, modified)))).toEqual({
      name: 'KmsUnwrapError',
      code: 'KMS_UNWRAP_FAILED',
      message: `wrapped data key failed authentication under local KEK ${kms.keyId}`,
    });
    expect(errorShape(await rejectionOf(kms.unwrapKey(keyId, wrapped.subarray(0, 28))))).toEqual({
      name: 'KmsUnwrapError',
      code: 'KMS_UNWRAP_FAILED',
      message: 'wrapped data key is too short (28 bytes)',
    });
  });
});
