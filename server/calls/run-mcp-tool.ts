import { apiError } from '../../shared/errors.ts';
import type { Credentials } from '../catalog/request.ts';
import { excerpt } from '../excerpt.ts';
import { err, ok } from '../result.ts';
import { withMcpServer } from './mcp-upstream.ts';
import { Redactor } from './redact.ts';
import { failedRun, succeeded, timedUpstream } from './run-answer.ts';
import type { RunOutcome } from './run-tool.ts';
import type { ToolCall } from './tool-call.ts';

/** What a `tools/call` answers, as far as the envelope reads it. */
interface CallToolResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: boolean;
}

/**
 * Runs a call of a tool of an MCP-server app (docs/reference.md "Apps from MCP servers"): the
 * server's `tools/call` with the tool's upstream name and the validated `parameters` as its
 * arguments, within the limits of every upstream. Success is the envelope with `data` =
 * `structuredContent`, else the content blocks; a result with `isError` is a 502 `upstream_error`
 * (`upstream_status` 200) holding the result; a JSON-RPC error too. Secrets of `call.seen` are
 * redacted from whatever comes back (the failure bodies, by the core: call-tool.ts).
 */
export async function runMcpTool(call: ToolCall, credentials: Credentials): Promise<RunOutcome> {
  const { app, tool } = call.target;
  const { config } = call.deps;
  const { report } = call;
  const outcome = await timedUpstream(report, () =>
    withMcpServer(
      app.mcpUrl as string,
      {
        headers: credentials.headers ?? {},
        timeoutMs: config.upstreamTimeoutMs,
        maxBodyBytes: config.maxUpstreamBodyBytes,
      },
      (client, request) =>
        client.request(
          {
            method: 'tools/call',
            params: { name: tool.tool.pathTemplate, arguments: call.request.parameters },
          },
          request,
        ) as Promise<CallToolResult>,
    ),
  );
  if (!outcome.ok) {
    const failure = outcome.error;
    switch (failure.kind) {
      case 'protocol_error':
        report.upstreamStatus = 200;
        return err(
          apiError('upstream_error', `The MCP server refused the call: ${failure.message}`.slice(0, 500), {
            upstream_status: 200,
            upstream_body: excerpt(Buffer.from(failure.body)),
          }),
        );
      case 'not_mcp':
        report.upstreamStatus = 200;
        return err(
          apiError('upstream_error', 'The MCP server answered something that is not MCP.', {
            upstream_status: 200,
            upstream_body: excerpt(Buffer.from(failure.message)),
          }),
        );
      default:
        return err(failedRun(report, failure, 'The MCP server'));
    }
  }
  report.upstreamStatus = 200;
  const result = outcome.value;
  const redactor = new Redactor(call.seen);
  if (result.isError === true) {
    return err(
      apiError('upstream_error', 'The MCP server answered the call with a tool error (isError).', {
        upstream_status: 200,
        upstream_body: excerpt(Buffer.from(JSON.stringify(result))),
      }),
    );
  }
  const data = result.structuredContent !== undefined ? result.structuredContent : (result.content ?? []);
  return ok(succeeded(call, redactor.empty ? data : redactor.value(data)));
}
