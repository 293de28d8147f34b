/**
 * The one upstream operation the bench drives: `GET /items/{itemId}` answering a small JSON body,
 * described by an OpenAPI 3.1 document. Shared by the upstream child and the bench itself.
 */

export const OPERATION_ID = 'getItem';
export const ITEM_ID = 'item-42';
export const ITEM_PATH = `/items/${ITEM_ID}`;

/** What the upstream answers for `ITEM_PATH` (about 90 bytes of JSON). */
export function itemBody(itemId: string): { id: string; title: string; price: number; tags: string[] } {
  return { id: itemId, title: 'A small item', price: 12.5, tags: ['bench', 'loopback'] };
}

export const EXPECTED_BODY = itemBody(ITEM_ID);

/** OpenAPI 3.1 document of the upstream, `servers[0].url` = `baseUrl`. */
export function upstreamOpenApi(baseUrl: string): Record<string, unknown> {
  return {
    openapi: '3.1.0',
    info: { title: 'Bench upstream', version: '1.0.0' },
    servers: [{ url: baseUrl }],
    paths: {
      '/items/{itemId}': {
        get: {
          operationId: OPERATION_ID,
          summary: 'Read one item',
          parameters: [
            {
              name: 'itemId',
              in: 'path',
              required: true,
              schema: { type: 'string', minLength: 1, maxLength: 64 },
            },
          ],
          responses: {
            '200': {
              description: 'The item',
              content: {
                'application/json': {
                  schema: {
                    type: 'object',
                    required: ['id', 'title', 'price', 'tags'],
                    properties: {
                      id: { type: 'string' },
                      title: { type: 'string' },
                      price: { type: 'number' },
                      tags: { type: 'array', items: { type: 'string' } },
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
  };
}

/** The MCP revision the bench's `/mcp` loads speak. */
export const MCP_VERSION = '2026-07-28';

/**
 * A plain 2026-07-28 `tools/call` of the bench's tool over `/mcp` (what the direct path serves):
 * the headers to add to the agent's own, and the body.
 */
export function mcpToolCall(tool: string): { headers: Record<string, string>; body: string } {
  return {
    headers: {
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MCP_VERSION,
      'mcp-method': 'tools/call',
      'mcp-name': tool,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: tool,
        arguments: { itemId: ITEM_ID },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MCP_VERSION,
          'io.modelcontextprotocol/clientInfo': { name: 'toolgate-bench', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  };
}
