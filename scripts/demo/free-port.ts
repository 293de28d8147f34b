import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A free TCP port on 127.0.0.1, closed again at once. For a server whose public URL must be known
 * before it starts (toolgate's PUBLIC_URL is registered at the OAuth provider first).
 */
export async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', resolve);
  });
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}
