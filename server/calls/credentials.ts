import type { LoadedApp } from '../apps/registry.ts';
import type { Credentials } from '../catalog/request.ts';

/** The app's own credential (auth `none` or `api_key`); a caller can never set or see it. */
export async function serviceCredentials(app: LoadedApp): Promise<Credentials> {
  if (app.auth.type !== 'api_key') return {};
  const value = await app.secret();
  if (value === null) return {};
  return app.auth.in === 'header'
    ? { headers: { [app.auth.name.toLowerCase()]: value } }
    : { query: { [app.auth.name]: value } };
}

/** An OAuth access token as the upstream expects it. */
export function bearer(accessToken: string): Credentials {
  return { headers: { authorization: `Bearer ${accessToken}` } };
}
