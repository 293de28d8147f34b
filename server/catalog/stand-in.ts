/**
 * A registration body read on the compile worker goes back to the event loop without its document:
 * the main thread validates the rest (provider, auth, …) as for any body, and the document stays
 * on the worker for the compile. What stands in for a value keeps its kind, so every check of the
 * registration answers as it would for the real value, with the same issues: any object passes as
 * a document, any non-empty string passes as one, and an array or string body is refused for its
 * kind alone.
 */
import type { Result } from '../result.ts';

/** What reading a registration body on the worker answers. */
export type BodyRead = Result<{ body: unknown; stoodIn: boolean }, 'malformed_json' | 'too_deep'>;

/** Stands in for a document given as text (YAML or JSON). */
export const TEXT_STAND_IN = '(the document, read on the compile worker)';

/** The body to validate on the main thread, and the document it stood in for (when it did). */
export function standInDocument(body: unknown): { body: unknown; document?: unknown } {
  if (Array.isArray(body)) return { body: [] };
  if (typeof body === 'string') return { body: body === '' ? '' : TEXT_STAND_IN };
  if (body === null || typeof body !== 'object' || !Object.hasOwn(body, 'openapi')) return { body };
  const document = (body as { openapi?: unknown }).openapi;
  if (typeof document === 'string' && document !== '') {
    return { body: { ...body, openapi: TEXT_STAND_IN }, document };
  }
  if (typeof document === 'object' && document !== null && !Array.isArray(document)) {
    return { body: { ...body, openapi: {} }, document };
  }
  return { body };
}
