import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The server's one route table: every path the server answers (REST procedures, tRPC, MCP, the
 * OAuth callback, docs, health) is an entry here, and one matcher decides 404, 405 (with Allow)
 * and HEAD for all of them.
 *
 * Paths are matched on the request target read as a path, byte for byte: no dot-segment removal,
 * no trailing-slash folding, no authority (`//x/proxyV2` is the path `//x/proxyV2`, not
 * `/proxyV2`). A `{name}` placeholder matches one non-empty segment, percent-decoded.
 */

/** What the table knows of a request, handed to the route that answers it. */
export interface RouteRequest {
  /** The query (and the path, as a URL) of the request; route on `path`, never on `url.pathname`. */
  readonly url: URL;
  /** The request target's path, as sent. */
  readonly path: string;
  /** The target has a query (or fragment): false means `url.search` is empty without parsing it. */
  readonly hasQuery: boolean;
  /** The route template's `{name}` values, percent-decoded. */
  readonly params: Record<string, string>;
  readonly requestId: string;
  /** performance.now() at arrival. */
  readonly startedAt: number;
}

/** Answers one request; anything it returns is ignored (metrics use the template). */
export type RouteHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  request: RouteRequest,
) => Promise<unknown>;

export interface RouteEntry {
  /** An HTTP method, or `*` for a handler that answers every method itself (tRPC). */
  method: string;
  /** A literal path or a template such as `/admin/clients/{clientId}/api-keys`. */
  path: string;
  handle: RouteHandler;
  /** A GET route answers HEAD too (without a body) unless this is false (e.g. the OAuth callback). */
  head?: boolean;
  /** The OpenAPI operation /openapi.json shows for a route that is not a procedure (http/openapi.ts). */
  openapi?: Record<string, unknown>;
  /** true for a procedure's REST route: trpc-to-openapi describes it in /openapi.json. */
  documented?: boolean;
}

export type RouteMatch =
  | { kind: 'found'; route: RouteEntry; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allow: string[]; template: string }
  | { kind: 'bad_path'; template: string }
  | { kind: 'none' };

interface Compiled {
  entry: RouteEntry;
  regex: RegExp;
  paramNames: string[];
}

export interface RouteTable {
  match(method: string, path: string): RouteMatch;
  /** Every (method, template) the table dispatches, in table order; `documented`: in /openapi.json. */
  operations(): Array<{ method: string; path: string; documented: boolean }>;
}

function compile(entry: RouteEntry): Compiled {
  const paramNames = [...entry.path.matchAll(/\{(.+?)\}/g)].map((m) => m[1] as string);
  const pattern = entry.path
    .split(/\{.+?\}/)
    .map((literal) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
    .join('([^/]+)');
  return { entry, regex: new RegExp(`^${pattern}$`), paramNames };
}

/** Builds the table. Literal paths are tried before templated ones, so `/admin/apps` never reads as `/admin/{x}`. */
export function createRouteTable(entries: readonly RouteEntry[]): RouteTable {
  const compiled = entries.map(compile).sort((a, b) => a.paramNames.length - b.paramNames.length);
  const allows = (entry: RouteEntry, method: string) =>
    entry.method === '*' ||
    entry.method === method ||
    (method === 'HEAD' && entry.method === 'GET' && entry.head !== false);

  return {
    match(method, path) {
      const allow: string[] = [];
      let template = '';
      for (const { entry, regex, paramNames } of compiled) {
        const m = regex.exec(path);
        if (!m) continue;
        if (!allows(entry, method)) {
          allow.push(entry.method);
          template ||= entry.path;
          continue;
        }
        const params: Record<string, string> = {};
        try {
          paramNames.forEach((name, i) => {
            params[name] = decodeURIComponent(m[i + 1] as string);
          });
        } catch {
          return { kind: 'bad_path', template: entry.path };
        }
        return { kind: 'found', route: entry, params };
      }
      return allow.length > 0
        ? { kind: 'method_not_allowed', allow: [...new Set(allow)], template }
        : { kind: 'none' };
    },
    operations: () =>
      entries.map(({ method, path, documented, openapi }) => ({
        method,
        path,
        documented: documented === true || openapi !== undefined,
      })),
  };
}

/** A handler built on its first request (one build, however many requests wait; retried if it failed). */
export function lazyHandler(build: () => Promise<RouteHandler>): RouteHandler {
  let handler: Promise<RouteHandler> | undefined;
  return async (...args) => {
    handler ??= build();
    handler.catch(() => {
      handler = undefined;
    });
    return (await handler)(...args);
  };
}

/** A request target read as a path; its URL (for the query) is parsed when a handler first asks. */
export class RequestTarget {
  #url: URL | undefined;

  constructor(
    /** The target's path, as sent. */
    readonly path: string,
    /** Path and query, origin-form. */
    private readonly originForm: string,
    url?: URL,
  ) {
    this.#url = url;
  }

  get hasQuery(): boolean {
    return this.originForm.length !== this.path.length;
  }

  get url(): URL {
    // The authority is given, so a path that begins with `//` stays a path.
    this.#url ??= new URL(`http://localhost${this.originForm}`);
    return this.#url;
  }
}

/** A request the table matched to a route: the route's view of it. */
export class MatchedRequest implements RouteRequest {
  constructor(
    private readonly target: RequestTarget,
    readonly params: Record<string, string>,
    readonly requestId: string,
    readonly startedAt: number,
  ) {}

  get path(): string {
    return this.target.path;
  }

  get hasQuery(): boolean {
    return this.target.hasQuery;
  }

  get url(): URL {
    return this.target.url;
  }
}

/**
 * The request target (RFC 9112 §3.2) as a path and a query. Origin-form (`/a/b?x`) is read as
 * is; absolute-form (`http://host/a/b?x`) loses only its scheme and authority. Anything else
 * (`*`, a bare word) is null: a 400. A target with a query or fragment is parsed as a URL here (and
 * null when it is none); a bare path always is one, so its URL is left to the first handler that
 * asks (most never do: /proxyV2 and /mcp read no query).
 */
export function parseTarget(target: string): RequestTarget | null {
  let rest = target;
  if (!rest.startsWith('/')) {
    const absolute = /^https?:\/\/[^/?#]*/i.exec(rest);
    if (!absolute) return null;
    rest = rest.slice(absolute[0].length);
    if (!rest.startsWith('/')) rest = `/${rest}`;
  }
  const end = rest.search(/[?#]/);
  if (end === -1) return new RequestTarget(rest, rest);
  try {
    return new RequestTarget(rest.slice(0, end), rest, new URL(`http://localhost${rest}`));
  } catch {
    return null;
  }
}
