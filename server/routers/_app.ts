import { router } from '../trpc.ts';
import { apiKeysRouter } from './admin/apiKeys.ts';
import { appsRouter } from './admin/apps.ts';
import { auditRouter } from './admin/audit.ts';
import { callsRouter } from './admin/calls.ts';
import { clientsRouter } from './admin/clients.ts';
import { adminConnectionsRouter } from './admin/connections.ts';
import { redirectUrisRouter } from './admin/redirectUris.ts';
import { adminToolsRouter } from './admin/tools.ts';
import { connectionsRouter } from './agent/connections.ts';
import { initiateOAuthProcedure } from './agent/initiateOAuth.ts';
import { proxyProcedure } from './agent/proxy.ts';
import { listToolsProcedure } from './agent/tools.ts';

export const appRouter = router({
  proxy: proxyProcedure,
  tools: router({ list: listToolsProcedure }),
  initiateOAuth: initiateOAuthProcedure,
  connections: connectionsRouter,
  admin: router({
    clients: clientsRouter,
    redirectUris: redirectUrisRouter,
    apiKeys: apiKeysRouter,
    apps: appsRouter,
    calls: callsRouter,
    audit: auditRouter,
    tools: adminToolsRouter,
    connections: adminConnectionsRouter,
  }),
});

export type AppRouter = typeof appRouter;
