import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A port on 127.0.0.1 that nothing listens on (bound once, then released): for a server that must
 * know its port before it starts (toolgate's PUBLIC_URL is registered at the OAuth provider
 * first), and for a URL that refuses every connection. The demo and the corpus run use it too.
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
