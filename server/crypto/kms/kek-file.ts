import { randomBytes, randomUUID } from 'node:crypto';
import { constants, promises as fs } from 'node:fs';
import path from 'node:path';
import { KmsConfigError } from './kms.ts';

/** A local key-encryption key is an AES-256 key. */
export const KEK_BYTES = 32;

/** Errors that mean "this filesystem cannot hard-link", not "someone else won the race". */
const NO_LINK_CODES = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'ENOSYS', 'EXDEV']);

/**
 * Reads the KEK file, creating it with a fresh random key when it does not exist.
 *
 * Creation is atomic: the key is written and synced to a private temporary file (O_EXCL, 0600),
 * then hard-linked to `file`. `link` fails with EEXIST when another process got there first, and
 * a reader can never see a half-written file, so servers starting together end with one key.
 *
 * @throws {KmsConfigError} when the file has another size than 32 bytes, is readable or
 *   writable by group or others, or cannot be read or created.
 * @example
 * ```ts
 * const kek = await loadOrCreateKekFile('./.toolgate/kek');
 * ```
 */
export async function loadOrCreateKekFile(file: string): Promise<Buffer> {
  const existing = await readKekFile(file);
  if (existing) return existing;
  await createKekFileIfAbsent(file);
  // Read back what is on disk: if another process won the race, its key is the one.
  const created = await readKekFile(file);
  if (!created) throw new KmsConfigError('LOCAL_KEK', `KEK file ${file} disappeared right after creation`);
  return created;
}

/** The key in `file`, or undefined when there is no such file. */
async function readKekFile(file: string): Promise<Buffer | undefined> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, constants.O_RDONLY);
  } catch (error) {
    if (errorCode(error) === 'ENOENT') return undefined;
    throw new KmsConfigError('LOCAL_KEK', `KEK file ${file} cannot be opened (${errorCode(error)})`, {
      cause: error,
    });
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new KmsConfigError('LOCAL_KEK', `KEK file ${file} is not a regular file`);
    // POSIX modes mean nothing on Windows; there the file's ACL is the operator's business.
    if (process.platform !== 'win32' && (stat.mode & 0o077) !== 0) {
      const mode = (stat.mode & 0o777).toString(8).padStart(4, '0');
      throw new KmsConfigError(
        'LOCAL_KEK',
        `KEK file ${file} is accessible to group or others (mode ${mode}); run chmod 600 ${file}`,
      );
    }
    if (stat.size !== KEK_BYTES) {
      throw new KmsConfigError(
        'LOCAL_KEK',
        `KEK file ${file} holds ${stat.size} bytes; a KEK file holds exactly ${KEK_BYTES}`,
      );
    }
    const kek = Buffer.alloc(KEK_BYTES);
    const { bytesRead } = await handle.read(kek, 0, KEK_BYTES, 0);
    if (bytesRead !== KEK_BYTES) {
      throw new KmsConfigError('LOCAL_KEK', `KEK file ${file} changed while being read`);
    }
    return kek;
  } finally {
    await handle.close();
  }
}

/**
 * Creates `file` holding a fresh random KEK unless it already exists; never replaces a file.
 * Exported for tests, which check that exclusivity without racing processes.
 *
 * @throws {KmsConfigError} when the directory or file cannot be created.
 */
export async function createKekFileIfAbsent(file: string): Promise<void> {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomUUID()}.tmp`);
  try {
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    await writeNewFile(tmp, randomBytes(KEK_BYTES));
    try {
      await fs.link(tmp, file);
    } catch (error) {
      const code = errorCode(error);
      if (code === 'EEXIST') return;
      if (!code || !NO_LINK_CODES.has(code)) throw error;
      // No hard links here: fall back to exclusive creation in place. A reader racing the write
      // may then see a short file and stop with a size error; a restart settles it.
      await writeNewFile(file, await fs.readFile(tmp)).catch((inPlace: unknown) => {
        if (errorCode(inPlace) !== 'EEXIST') throw inPlace;
      });
    }
  } catch (error) {
    throw new KmsConfigError('LOCAL_KEK', `KEK file ${file} cannot be created (${errorCode(error)})`, {
      cause: error,
    });
  } finally {
    await fs.rm(tmp, { force: true });
  }
}

/** Creates `file` exclusively (O_EXCL) with mode 0600 and makes its content durable. */
async function writeNewFile(file: string, content: Buffer): Promise<void> {
  const handle = await fs.open(file, 'wx', 0o600);
  try {
    await handle.writeFile(content);
    await handle.sync();
  } finally {
    content.fill(0);
    await handle.close();
  }
}

function errorCode(error: unknown): string | undefined {
  return typeof error === 'object' && error !== null && 'code' in error ? String(error.code) : undefined;
}
