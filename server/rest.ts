import type { AnyRouter } from '@trpc/server';
import type { OpenApiMeta } from 'trpc-to-openapi';

/**
 * The REST face of the router: every procedure with `meta.openapi` is a route, exactly as
 * trpc-to-openapi documents it in /openapi.json. We dispatch ourselves (instead of
 * trpc-to-openapi's handler) because the contract fixes every status and every byte of the error
 * bodies, including 405, 413, 415 and input errors, which that handler shapes its own way.
 */

export interface Route {
  method: string;
  template: string;
  procedurePath: string;
  paramNames: string[];
  regex: RegExp;
  /** true when input comes from a JSON body, false when from the query string. */
  usesBody: boolean;
}

export type RouteMatch =
  | { kind: 'found'; route: Route; params: Record<string, string> }
  | { kind: 'method_not_allowed'; allow: string[]; template: string }
  | { kind: 'bad_path' }
  | { kind: 'none' };

export function collectRoutes(router: AnyRouter): Route[] {
  const routes: Route[] = [];
  for (const [procedurePath, procedure] of Object.entries(router._def.procedures)) {
    const openapi = (procedure as { _def: { meta?: OpenApiMeta } })._def.meta?.openapi;
    if (!openapi?.path || openapi.enabled === false) continue;
    const paramNames = [...openapi.path.matchAll(/\{(.+?)\}/g)].map((m) => m[1] as string);
    const pattern = openapi.path
      .split(/\{.+?\}/)
      .map((literal) => literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('([^/]+)');
    routes.push({
      method: openapi.method,
      template: openapi.path,
      procedurePath,
      paramNames,
      regex: new RegExp(`^${pattern}$`),
      usesBody: openapi.method === 'POST' || openapi.method === 'PUT' || openapi.method === 'PATCH',
    });
  }
  // Literal routes before templated ones, so `/admin/apps` never reads as `/admin/{x}`.
  return routes.sort((a, b) => a.paramNames.length - b.paramNames.length);
}

export function matchRoute(routes: readonly Route[], method: string, pathname: string): RouteMatch {
  const path = pathname.length > 1 ? pathname.replace(/\/+$/, '') : pathname;
  const allow: string[] = [];
  let template = '';
  for (const route of routes) {
    const m = route.regex.exec(path);
    if (!m) continue;
    if (route.method !== method && !(method === 'HEAD' && route.method === 'GET')) {
      allow.push(route.method);
      template ||= route.template;
      continue;
    }
    const params: Record<string, string> = {};
    try {
      route.paramNames.forEach((name, i) => {
        params[name] = decodeURIComponent(m[i + 1] as string);
      });
    } catch {
      return { kind: 'bad_path' };
    }
    return { kind: 'found', route, params };
  }
  return allow.length > 0
    ? { kind: 'method_not_allowed', allow: [...new Set(allow)], template }
    : { kind: 'none' };
}

/** The procedure's input: query (first value of each name) or JSON body, with path parameters on top. */
export function routeInput(route: Route, params: Record<string, string>, url: URL, body: unknown): unknown {
  if (route.usesBody) {
    if (body === undefined) return { ...params };
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return body;
    return { ...(body as Record<string, unknown>), ...params };
  }
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) if (!(name in query)) query[name] = value;
  return { ...query, ...params };
}
