import { randomBytes } from 'node:crypto';
import type { Kms } from '../../server/crypto/kms/kms.ts';
import { createLocalKms, type LocalKms } from '../../server/crypto/kms/local.ts';

/** A local KMS with a fresh random KEK given inline (no file). */
export function freshLocalKms(): Promise<LocalKms> {
  return createLocalKms({ kek: randomBytes(32).toString('base64'), kekPath: '/nonexistent/never-used' });
}

/** What a {@link spyKms} saw. */
export interface KmsCalls {
  wrap: number;
  unwrap: number;
  /** Copies of every data key handed to wrapKey, in order. */
  dataKeys: Buffer[];
}

/**
 * Wraps a KMS, counting calls and keeping copies of the data keys it was asked to wrap.
 * `failUnwrap` makes the next unwraps reject (or resolve to `result`) before reaching `inner`.
 */
export function spyKms(inner: Kms) {
  const calls: KmsCalls = { wrap: 0, unwrap: 0, dataKeys: [] };
  const unwrapOverrides: Array<() => Promise<Buffer>> = [];
  const kms: Kms = {
    kind: inner.kind,
    async wrapKey(dataKey) {
      calls.wrap++;
      calls.dataKeys.push(Buffer.from(dataKey));
      return inner.wrapKey(dataKey);
    },
    async unwrapKey(keyId, wrapped) {
      calls.unwrap++;
      const override = unwrapOverrides.shift();
      if (override) return override();
      return inner.unwrapKey(keyId, wrapped);
    },
  };
  return {
    kms,
    calls,
    /** The next unwrap answers with `answer` instead of asking the inner KMS. */
    overrideNextUnwrap(answer: () => Promise<Buffer>) {
      unwrapOverrides.push(answer);
    },
  };
}

/** The error fields tests compare as a whole. */
export function errorShape(error: unknown) {
  if (!(error instanceof Error)) return { notAnError: error };
  return { name: error.name, code: (error as { code?: unknown }).code, message: error.message };
}

/** Resolves to the rejection of `promise`; fails the test if it resolves. */
export async function rejectionOf(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection, but the promise resolved');
}
