/**
 * The SDK's world (test/sdk/world.ts) with one more app, `big`: 300 operations (more than OpenAI's
 * 128 tools per request) on an echo upstream that answers every request.
 */
import { registerApp } from '../../support/agent.ts';
import type { BackendName } from '../../support/db.ts';
import { type EchoUpstream, startEchoUpstream } from '../../support/echo-upstream.ts';
import { manyToolsDocument, THINGS } from '../../support/fixtures/openapi/many-tools.ts';
import { startWorld, type World } from '../world.ts';

export const BIG_TOOLS = THINGS.length * 6;

export interface LargeWorld extends World {
  /** The upstream of `big`: every request it received. */
  echo: EchoUpstream;
}

export async function startLargeWorld(backend: BackendName): Promise<LargeWorld> {
  const [w, echo] = await Promise.all([startWorld(backend), startEchoUpstream()]);
  const tools = await registerApp(w.server, 'big', {
    provider: 'toolgate.many',
    openapi: manyToolsDocument(echo.url),
    auth: { type: 'none' },
  });
  if (tools.length !== BIG_TOOLS) throw new Error(`big has ${tools.length} tools, not ${BIG_TOOLS}`);
  return {
    ...w,
    echo,
    close: async () => {
      await w.close();
      await echo.close();
    },
  };
}
