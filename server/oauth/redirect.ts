/**
 * The client's registered redirect URI with our result parameters added. The URI's own query is
 * kept byte for byte (no re-encoding); an earlier `status` or `reason` in it gives way to ours,
 * so the client never reads two answers.
 *
 * @example
 * redirectWith('https://agent.example/cb?tenant=a%20b', { status: 'success' })
 * // → 'https://agent.example/cb?tenant=a%20b&status=success'
 */
export function redirectWith(uri: string, params: Record<string, string>): string {
  const hashAt = uri.indexOf('#');
  const beforeHash = hashAt === -1 ? uri : uri.slice(0, hashAt);
  const hash = hashAt === -1 ? '' : uri.slice(hashAt);
  const queryAt = beforeHash.indexOf('?');
  const base = queryAt === -1 ? beforeHash : beforeHash.slice(0, queryAt);
  const query = queryAt === -1 ? '' : beforeHash.slice(queryAt + 1);
  const ours = new Set(Object.keys(params));
  const kept = query.split('&').filter((pair) => pair !== '' && !ours.has(nameOf(pair)));
  const added = Object.entries(params).map(
    ([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`,
  );
  return `${base}?${[...kept, ...added].join('&')}${hash}`;
}

function nameOf(pair: string): string {
  const raw = pair.split('=', 1)[0] ?? '';
  try {
    return decodeURIComponent(raw.replaceAll('+', ' '));
  } catch {
    return raw;
  }
}
