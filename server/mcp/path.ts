/**
 * The path of the MCP endpoint (docs/reference.md "MCP"), apart from http.ts: the route table and
 * /openapi.json name it without loading the MCP SDK, which loads on the first /mcp request.
 */
export const MCP_PATH = '/mcp';
