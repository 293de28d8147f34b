import type { AppDeps } from '../deps.ts';
import { mcpRoutes } from '../mcp/route.ts';
import type { Metrics } from '../metrics.ts';
import { appRouter } from '../routers/_app.ts';
import { createCallerFactory } from '../trpc.ts';
import { consoleRoutes } from './console-routes.ts';
import { oauthRoutes } from './oauth-routes.ts';
import { buildOpenApiDocument } from './openapi.ts';
import { operationalRoutes } from './operational-routes.ts';
import { procedureRoutes } from './rest.ts';
import type { RouteEntry } from './route-table.ts';
import { signinRoutes } from './signin-routes.ts';
import { trpcMount } from './trpc-mount.ts';

const createCaller = createCallerFactory(appRouter);

/**
 * The server's ONE route table (route-table.ts): the OAuth paths, MCP, the operational paths, the
 * web console, tRPC under /trpc and the REST routes of the procedures. To add a path, add an entry to one of these
 * lists; 404, 405 + Allow and HEAD come from the table. A route describes itself in /openapi.json
 * with its `openapi` operation (in table order), a procedure with its meta (a test holds the
 * document and the table to each other).
 */
export function createRoutes(deps: AppDeps, metrics: Metrics): RouteEntry[] {
  const openapiJson = () =>
    buildOpenApiDocument(appRouter, deps.config.publicUrl, routes).then((document) =>
      JSON.stringify(document),
    );
  const routes: RouteEntry[] = [
    ...oauthRoutes(deps),
    ...signinRoutes(deps),
    ...mcpRoutes(deps),
    ...operationalRoutes(deps, metrics, openapiJson),
    ...consoleRoutes(deps),
    trpcMount(deps),
    ...procedureRoutes(deps, appRouter, createCaller),
  ];
  return routes;
}
