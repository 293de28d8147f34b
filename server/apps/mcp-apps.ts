/**
 * Apps from MCP servers (docs/reference.md "Apps from MCP servers"): registration reads the
 * server's whole `tools/list` with the official MCP client, compiles it on the compile worker like a
 * document, and stores it; `refresh` reads it again. Nothing is stored unless the whole list was read
 * and compiled: a server that fails halfway leaves the app as it was.
 */
import { z } from 'zod';
import { apiError, type ErrorBody, type Issue } from '../../shared/errors.ts';
import type { PublicAuth, PutAppInput } from '../../shared/schemas/apps.ts';
import { type McpUpstreamFailure, withMcpServer } from '../calls/mcp-upstream.ts';
import { upstreamFailure } from '../calls/run-answer.ts';
import { LIMITS } from '../config.ts';
import type { AppDeps } from '../deps.ts';
import { discoverAuthorization } from '../oauth/discover.ts';
import { err, ok, type Result } from '../result.ts';
import {
  type AlsoInTransaction,
  type PutAppValue,
  registrationProblem,
  splitSecret,
  storeApp,
} from './store.ts';

/** Registers (creates or replaces) an app from the MCP server at `url`. */
export async function putMcpApp(
  deps: AppDeps,
  input: PutAppInput,
  url: string,
  now: Date,
  also: AlsoInTransaction,
): Promise<Result<PutAppValue, ErrorBody>> {
  const issues: Issue[] = [];
  if (input.openapi !== undefined) {
    issues.push({
      path: '/openapi',
      message: 'An app comes from an OpenAPI document or from an MCP server, not both.',
    });
  }
  if (input.baseUrl !== undefined) {
    issues.push({
      path: '/baseUrl',
      message: 'An app from an MCP server is called at mcp.url; it has no base URL.',
    });
  }
  if (input.auth.type === 'api_key' && input.auth.in !== 'header') {
    issues.push({ path: '/auth/in', message: 'An MCP server takes its API key in a header.' });
  }
  if (issues.length > 0) return err(registrationProblem(issues));

  let publicAuth: PublicAuth;
  let secret: string | null;
  if (input.auth.type === 'oauth2' && input.auth.discover === true) {
    const found = await discoverAuthorization(deps, url, input.auth.scopes);
    if (!found.ok) return found;
    ({ publicAuth, secret } = found.value);
  } else {
    ({ publicAuth, secret } = splitSecret(input.auth as Exclude<typeof input.auth, { discover: true }>));
    // RFC 8707: an MCP server's tokens are asked for that server (MCP authorization).
    if (publicAuth.type === 'oauth2') publicAuth = { ...publicAuth, resource: url };
  }
  return readAndStore(
    deps,
    { appId: input.appId, provider: input.provider, url, publicAuth, secret, now },
    also,
  );
}

/** Reads the tools of a registered MCP-server app again (POST /admin/apps/{appId}/refresh). */
export async function refreshMcpApp(
  deps: AppDeps,
  appId: string,
  now: Date,
  also: AlsoInTransaction,
): Promise<Result<PutAppValue, ErrorBody>> {
  const app = await deps.apps.get(appId);
  if (!app) return err(apiError('app_not_found', `No app ${appId} is registered.`, { app_id: appId }));
  if (app.mcpUrl === null) {
    return err(
      registrationProblem([
        {
          path: '',
          message: `App ${appId} comes from an OpenAPI document: register it again to change its tools.`,
        },
      ]),
    );
  }
  const secret = await app.secret();
  return readAndStore(
    deps,
    { appId, provider: app.provider, url: app.mcpUrl, publicAuth: app.auth, secret, now },
    also,
  );
}

interface McpRegistration {
  appId: string;
  provider: string;
  url: string;
  publicAuth: PublicAuth;
  secret: string | null;
  now: Date;
}

async function readAndStore(
  deps: AppDeps,
  app: McpRegistration,
  also: AlsoInTransaction,
): Promise<Result<PutAppValue, ErrorBody>> {
  const listed = await listTools(deps, app.url, app.publicAuth, app.secret);
  if (!listed.ok) return listed;
  const compiled = await deps.apps.compiler.compile(
    { tools: listed.value },
    { mcp: true, app: { appId: app.appId, provider: app.provider } },
  );
  if (!compiled.ok) return err(registrationProblem(compiled.error));
  const stored = await storeApp(
    deps,
    {
      appId: app.appId,
      provider: app.provider,
      baseUrl: null,
      mcpUrl: app.url,
      publicAuth: app.publicAuth,
      secret: app.secret,
      compiled: compiled.value,
      now: app.now,
    },
    also,
  );
  deps.apps.invalidate(app.appId);
  return ok(stored);
}

/**
 * A page of tools/list, read leniently: the SDK's own schema refuses the whole page for one odd
 * tool, where registration skips that tool with its reason (mcp-catalog.ts).
 */
const LISTED_PAGE = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });

/** The server refused to go on listing (too many tools, a cursor that loops): said at `/mcp/url`. */
class ListRefused extends Error {
  override readonly name = 'ListRefused';
}

/** Every page of the server's `tools/list`, within the limits of one upstream answer. */
async function listTools(
  deps: AppDeps,
  url: string,
  auth: PublicAuth,
  secret: string | null,
): Promise<Result<unknown[], ErrorBody>> {
  const headers: Record<string, string> =
    auth.type === 'api_key' && secret !== null ? { [auth.name]: secret } : {};
  let refused: string | undefined;
  const outcome = await withMcpServer(
    url,
    { headers, timeoutMs: deps.config.upstreamTimeoutMs, maxBodyBytes: deps.config.maxUpstreamBodyBytes },
    async (client, request) => {
      const tools: unknown[] = [];
      const cursors = new Set<string>();
      let cursor: string | undefined;
      for (;;) {
        const page = await client.request(
          { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
          LISTED_PAGE,
          request,
        );
        tools.push(...page.tools);
        if (tools.length > LIMITS.mcpServerMaxTools) {
          refused = `The MCP server lists more than ${LIMITS.mcpServerMaxTools} tools.`;
          throw new ListRefused(refused);
        }
        cursor = page.nextCursor;
        if (cursor === undefined) return tools;
        if (cursors.has(cursor)) {
          refused = 'The MCP server answered the same tools/list cursor twice (its pages never end).';
          throw new ListRefused(refused);
        }
        cursors.add(cursor);
      }
    },
  );
  if (outcome.ok) return outcome;
  if (refused !== undefined) return err(registrationProblem([{ path: '/mcp/url', message: refused }]));
  return err(registrationFailure(outcome.error, auth));
}

/** A failure to read the server, as a registration's answer. */
function registrationFailure(failure: McpUpstreamFailure, auth: PublicAuth): ErrorBody {
  const at = (message: string) => registrationProblem([{ path: '/mcp/url', message }]);
  switch (failure.kind) {
    case 'upstream_unreachable':
    case 'upstream_too_large':
      return upstreamFailure(failure, 'The MCP server');
    case 'upstream_timeout':
      return at('The MCP server did not answer in time (UPSTREAM_TIMEOUT_MS).');
    case 'upstream_error':
      if (failure.status === 401 || failure.status === 403) {
        return at(
          auth.type === 'oauth2'
            ? `The MCP server answered ${failure.status} to tools/list without a user's authorization; toolgate reads an oauth2 server's tools before any user has connected, so the server must list them to anyone.`
            : `The MCP server answered ${failure.status}: it refused the app's credential.`,
        );
      }
      return at(`This URL is not an MCP server (Streamable HTTP): it answered HTTP ${failure.status}.`);
    case 'protocol_error':
      return at(`The MCP server refused tools/list: ${failure.message}`);
    case 'not_mcp':
      return at(`The server's answer is not MCP (Streamable HTTP): ${failure.message}`);
  }
}
