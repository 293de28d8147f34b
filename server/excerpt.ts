import { LIMITS } from './config.ts';

/**
 * The first 64 KiB of a relayed body as UTF-8 (an upstream's or a token endpoint's error body). A
 * character cut at the edge is dropped rather than turned into U+FFFD, which would push the
 * excerpt past 64 KiB: a streaming decode holds it back.
 */
export function excerpt(bytes: Buffer): string {
  if (bytes.length <= LIMITS.upstreamBodyExcerptBytes) return new TextDecoder('utf-8').decode(bytes);
  return new TextDecoder('utf-8').decode(bytes.subarray(0, LIMITS.upstreamBodyExcerptBytes), {
    stream: true,
  });
}
