import type { ErrorBody } from '../../shared/errors.ts';
import type { ProxySuccess } from '../../shared/schemas/agent.ts';

/**
 * Call outcomes as MCP `CallToolResult`s (docs/reference.md "MCP"): the §2 envelope or the §1 error body as
 * `structuredContent`, and a text block a model can read and act on.
 */

export interface ToolResult {
  [key: string]: unknown;
  content: Array<{ type: 'text'; text: string }>;
  structuredContent: Record<string, unknown>;
  isError?: true;
}

export function successResult(envelope: ProxySuccess): ToolResult {
  return {
    content: [{ type: 'text', text: JSON.stringify(envelope) }],
    structuredContent: envelope as unknown as Record<string, unknown>,
  };
}

/** One sentence saying what the model can do about a failed call. */
export function explain(body: ErrorBody & { authorization_url?: string }): string {
  switch (body.error) {
    case 'invalid_parameters':
      return "The arguments do not match the tool's input schema: fix the listed issues and call the tool again.";
    case 'rbac_denied':
      return `The call needs the scope ${body.scope}, which this connection or the user's authorization lacks; it cannot succeed until that is granted.`;
    case 'rate_limited':
      return `Too many calls with this API key: wait ${body.retry_after} seconds, then call the tool again.`;
    case 'upstream_error':
      return `The upstream API answered ${body.upstream_status}: read upstream_body for its reason before calling again.`;
    case 'upstream_unreachable':
      return 'The upstream API could not be reached: try again later.';
    case 'upstream_timeout':
      return 'The upstream API did not answer in time: try again later.';
    case 'upstream_too_large':
      return `The upstream answer was larger than ${body.limit} bytes: ask for less (filters, paging) and call again.`;
    case 'auth_required':
      return body.authorization_url
        ? `The user must connect ${body.app_id} first: show them authorization_url, and call the tool again after they have connected.`
        : `The user must connect ${body.app_id} first.`;
    case 'invalid_request':
      return `${body.message} Add the missing or malformed value to the MCP connection, then call again.`;
    default:
      return body.message;
  }
}

export function errorResult(body: ErrorBody & { authorization_url?: string }): ToolResult {
  return {
    content: [{ type: 'text', text: `${explain(body)}\n${JSON.stringify(body)}` }],
    structuredContent: body as unknown as Record<string, unknown>,
    isError: true,
  };
}
