/**
 * The demo's MCP round: an MCP client built on the official SDK (v2, protocol 2026-07-28) connects
 * to toolgate's `/mcp` with the agent's headers, lists the tools, and calls an OAuth tool for a
 * user who has not connected the app. toolgate answers a URL elicitation; the client hands the URL
 * to the (simulated) user, who consents at the provider and lands on toolgate's /oauth/complete
 * page; the client retries with the signed requestState and the tool runs, once.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { OAuthProviderFixture } from '../../test/support/oauth-provider.ts';
import { consent } from '../../test/support/simulated-user.ts';
import type { Upstream } from '../../test/support/upstream.ts';
import type { Reporter } from './reporter.ts';
import { shortUrl } from './reporter.ts';

export interface McpRoundOptions {
  baseUrl: string;
  apiKey: string;
  clientId: string;
  userId: string;
  appId: string;
  provider: OAuthProviderFixture;
  upstream: Upstream;
}

export async function mcpRound(report: Reporter, options: McpRoundOptions): Promise<void> {
  const { baseUrl, userId, appId, provider, upstream } = options;
  const url = new URL(`/mcp?apps=${appId}`, baseUrl);
  report.detail(
    [
      `MCP server URL: ${url.href}`,
      `headers: Authorization: Bearer <API key>, X-Service-Client-Id, X-Service-User-Id: ${userId}`,
    ].join('\n'),
  );
  const client = new Client(
    { name: 'toolgate-demo-assistant', version: '1.0.0' },
    {
      // "I can show the user a link": the capability that lets toolgate ask for consent in-protocol.
      capabilities: { elicitation: { url: {} } },
      versionNegotiation: { mode: { pin: '2026-07-28' } },
    },
  );
  let elicitations = 0;
  client.setRequestHandler('elicitation/create', async (request) => {
    elicitations += 1;
    const params = request.params as { url: string; message: string };
    report.detail(`← input required: URL elicitation "${params.message}"`);
    report.detail(`the assistant shows the user the link: ${shortUrl(params.url)}`);
    const visit = await consent(provider, params.url, { account: userId });
    report.detail(
      [
        `  the user signs in as "${userId}" at the provider and consents`,
        `  toolgate stores the grant and shows its page: ${shortUrl(visit.redirectedTo)} (${visit.landingStatus})`,
        '→ the client retries tools/call with the signed requestState',
      ].join('\n'),
    );
    // The page reads the flow's outcome from toolgate's database, not from its URL.
    const connected = visit.landingText.includes('is now connected');
    report.check(connected, `toolgate's page does not say the app is now connected (${visit.landingStatus})`);
    return { action: 'accept' };
  });
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: {
        headers: {
          authorization: `Bearer ${options.apiKey}`,
          'x-service-client-id': options.clientId,
          'x-service-user-id': userId,
        },
      },
    }),
  );
  try {
    const { tools } = await client.listTools();
    const getMe = tools.find((t) => t._meta?.['toolgate/toolId'] === `${appId}:::getMe`);
    report.check(getMe, 'tools/list should name the getMe tool');
    report.detail(`tools/list: ${tools.length} tools, e.g. ${getMe.name} — "${getMe.title}"`);

    const before = upstream.requests.filter((r) => r.path === '/me').length;
    report.detail(`→ tools/call ${getMe.name} for user "${userId}", who has not connected ${appId}`);
    const result = await client.callTool({ name: getMe.name, arguments: {} });
    const ran = upstream.requests.filter((r) => r.path === '/me').length - before;
    report.check(!result.isError, `the call failed: ${JSON.stringify(result.structuredContent)}`);
    report.check(elicitations === 1, `expected one URL elicitation, got ${elicitations}`);
    report.check(ran === 1, `the upstream should have run exactly once, ran ${ran} times`);
    const envelope = result.structuredContent as { data: { id?: unknown }; meta: { duration_ms: number } };
    report.ok(`← result ${JSON.stringify(envelope.data)} (structuredContent + text); the upstream ran once`);
    // Isolation: the upstream answers by the token toolgate sent, and each user's grant is their own.
    report.check(
      envelope.data?.id === userId,
      `user "${userId}" received the profile of "${String(envelope.data?.id)}"`,
    );
    report.ok(`"${userId}" got their own profile, never another user's: toolgate sent ${userId}'s token`);
  } finally {
    await client.close();
  }
}
