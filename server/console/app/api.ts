/**
 * The console's one way to the server: the admin REST routes (docs/reference.md "Administration"),
 * signed in by the HttpOnly session cookie the browser sends by itself. The page never holds the
 * admin key after sign-in, and keeps nothing in localStorage or sessionStorage: the CSRF token the
 * server hands it lives in this module's memory only, and every change sends it as X-CSRF-Token.
 */

/** A contract error body: `{ ok: false, error, message, ...extra }`. */
export interface ErrorBody {
  ok: false;
  error: string;
  message: string;
  issues?: Array<{ path: string; message: string }>;
  [extra: string]: unknown;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
  ) {
    super(body.message);
    this.name = 'ApiError';
  }

  /** The message and, when the server listed them, each issue on a line of its own. */
  describe(): string {
    const issues = (this.body.issues ?? []).map((issue) => `${issue.path || 'body'}: ${issue.message}`);
    return [this.body.message, ...issues].join('\n');
  }
}

export interface Session {
  keyId: string | null;
  expiresAt: string;
  csrfToken: string;
}

let csrfToken: string | null = null;
const endedListeners = new Set<() => void>();

/** Called when the server says the session is over (a 401), wherever the page was. */
export function onSessionEnded(listener: () => void): () => void {
  endedListeners.add(listener);
  return () => endedListeners.delete(listener);
}

function rememberSession(session: Session | null): Session | null {
  csrfToken = session?.csrfToken ?? null;
  return session;
}

async function errorOf(response: Response): Promise<ApiError> {
  let body: ErrorBody;
  try {
    body = (await response.json()) as ErrorBody;
  } catch {
    body = { ok: false, error: 'unexpected', message: `The server answered ${response.status}.` };
  }
  return new ApiError(response.status, body);
}

/** One JSON request; answers the parsed body of a 2xx, throws ApiError otherwise. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
    cache: 'no-store',
  });
  if (!response.ok) {
    const error = await errorOf(response);
    if (response.status === 401 && path.startsWith('/admin/')) {
      rememberSession(null);
      for (const listener of endedListeners) listener();
    }
    throw error;
  }
  return (await response.json()) as T;
}

/** The session of this browser's cookie, or null when signed out. */
export async function currentSession(): Promise<Session | null> {
  try {
    return rememberSession(await api<Session>('GET', '/console/session'));
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) return rememberSession(null);
    throw error;
  }
}

/** Exchanges the admin key for the session cookie; the key is not kept anywhere after this call. */
export async function signIn(apiKey: string): Promise<Session> {
  return rememberSession(await api<Session>('POST', '/console/session', { apiKey })) as Session;
}

export async function signOut(): Promise<void> {
  await api('DELETE', '/console/session');
  rememberSession(null);
}

/** A path with its query, leaving out empty values. */
export function withQuery(path: string, query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== '') params.set(name, String(value));
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

/**
 * PUT with upload progress (fetch cannot report it): `onProgress(sent, total)` while the body goes
 * out, then the answer as `api` gives it. Large OpenAPI documents take a while to send and compile.
 */
export function putWithProgress<T>(
  path: string,
  body: unknown,
  onProgress: (sent: number, total: number) => void,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    request.open('PUT', path);
    request.setRequestHeader('content-type', 'application/json');
    request.setRequestHeader('accept', 'application/json');
    if (csrfToken) request.setRequestHeader('x-csrf-token', csrfToken);
    request.upload.onprogress = (event) => onProgress(event.loaded, event.total);
    request.onerror = () =>
      reject(new ApiError(0, { ok: false, error: 'network', message: 'The server could not be reached.' }));
    request.onload = () => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(request.responseText);
      } catch {
        parsed = { ok: false, error: 'unexpected', message: `The server answered ${request.status}.` };
      }
      if (request.status >= 200 && request.status < 300) resolve(parsed as T);
      else {
        if (request.status === 401) {
          rememberSession(null);
          for (const listener of endedListeners) listener();
        }
        reject(new ApiError(request.status, parsed as ErrorBody));
      }
    };
    request.send(JSON.stringify(body));
  });
}
