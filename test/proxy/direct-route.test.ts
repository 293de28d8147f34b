/**
 * REST `POST /proxyV2` runs `serveProxy` instead of the tRPC caller (issue 14): it must parse with
 * the very schemas the procedure declares, which /openapi.json documents and tRPC applies.
 */
import { expect, it } from 'vitest';
import { proxyProcedure } from '../../server/routers/agent/proxy.ts';
import { proxyInput, proxyOutput } from '../../shared/schemas/agent.ts';

it('parses with the input and output schemas of the proxy procedure', () => {
  const def = proxyProcedure._def as unknown as { inputs: unknown[]; output?: unknown };
  expect(def.inputs).toHaveLength(1);
  expect(def.inputs[0]).toBe(proxyInput);
  expect(def.output).toBe(proxyOutput);
});
