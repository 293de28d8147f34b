import type { LoadedApp } from '../apps/registry.ts';

/** What the service adds to an upstream request on the app's behalf. */
export interface Credentials {
  headers?: Record<string, string>;
  query?: Record<string, string>;
}

/** The app's own credential (auth `none` or `api_key`); a caller can never set or see it. */
export async function serviceCredentials(app: LoadedApp): Promise<Credentials> {
  if (app.auth.type !== 'api_key') return {};
  const value = await app.secret();
  if (value === null) return {};
  return app.auth.in === 'header'
    ? { headers: { [app.auth.name.toLowerCase()]: value } }
    : { query: { [app.auth.name]: value } };
}
