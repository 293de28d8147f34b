/** Media types: which request bodies a tool can send (JSON only) and what it accepts back. */
import { isObject } from './pointer.ts';

/** The media type without parameters, lower-cased: `Application/JSON; charset=utf-8` → `application/json`. */
export function essence(mediaType: string): string {
  return (mediaType.split(';')[0] ?? '').trim().toLowerCase();
}

export function isJsonMediaType(mediaType: string): boolean {
  const type = essence(mediaType);
  return type === 'application/json' || /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+\+json$/.test(type);
}

/**
 * The entry of a `content` map a tool sends JSON as: `application/json` first, then another JSON
 * type (`application/merge-patch+json`, ...), then a wildcard that admits JSON (sent as
 * `application/json`). Null when the operation takes no JSON.
 */
export function pickJsonContent(content: unknown): { contentType: string; media: unknown } | null {
  if (!isObject(content)) return null;
  const entries = Object.entries(content);
  const exact = entries.find(([type]) => essence(type) === 'application/json');
  if (exact) return { contentType: exact[0], media: exact[1] };
  const json = entries.find(([type]) => isJsonMediaType(type));
  if (json) return { contentType: json[0], media: json[1] };
  const wildcard = entries.find(([type]) => ['*/*', 'application/*'].includes(essence(type)));
  if (wildcard) return { contentType: 'application/json', media: wildcard[1] };
  return null;
}
