/** The benchmark's side of HTTP: it talks to toolgate only as an administrator and an agent would. */
import type { Agent } from '../corpus/server.ts';
import type { ListedTool } from './catalog.ts';

export interface Registration {
  status: number;
  tools: string[];
  skipped: { method: string; path: string; reason: string }[];
  issues?: { path: string; message: string }[];
}

/** PUT /admin/apps/{id} with the document as JSON (the object itself, as a user sends it). */
export async function registerDocument(
  url: string,
  adminKey: string,
  id: string,
  documentText: string,
): Promise<Registration> {
  // The base URL is never called: the benchmark only reads the catalog.
  const body = `{"provider":"bench.api","baseUrl":"http://127.0.0.1:9","auth":{"type":"none"},"openapi":${documentText}}`;
  const reply = await fetch(`${url}/admin/apps/${encodeURIComponent(id)}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${adminKey}`, 'content-type': 'application/json' },
    body,
  });
  const answer = (await reply.json()) as Partial<Registration>;
  return {
    status: reply.status,
    tools: answer.tools ?? [],
    skipped: answer.skipped ?? [],
    ...(answer.issues ? { issues: answer.issues } : {}),
  };
}

function agentHeaders(agent: Agent): Record<string, string> {
  return { authorization: `Bearer ${agent.apiKey}`, 'x-service-client-id': agent.clientId };
}

/** Every tool of one app, in catalog order, following `next_cursor`. */
export async function listTools(url: string, agent: Agent, appId: string): Promise<ListedTool[]> {
  const tools: ListedTool[] = [];
  let cursor: string | undefined;
  do {
    const query = new URLSearchParams({ appId, limit: '1000', ...(cursor ? { cursor } : {}) });
    const reply = await fetch(`${url}/tools?${query}`, { headers: agentHeaders(agent) });
    if (reply.status !== 200) throw new Error(`GET /tools?appId=${appId} answered ${reply.status}`);
    const page = (await reply.json()) as { tools: ListedTool[]; next_cursor?: string };
    for (const { name, description, title } of page.tools)
      tools.push({ name, description, ...(title === undefined ? {} : { title }) });
    cursor = page.next_cursor;
  } while (cursor);
  return tools;
}

export interface SearchAnswer {
  /** The answered tools' `toolId`s, best first. */
  toolIds: string[];
  /** From sending the request to reading the whole body. */
  ms: number;
}

/**
 * GET /tools?q=…&limit=10, scoped to one app or across all. `limit` is sent explicitly: the
 * ranked contract defaults it to 20 when `q` is given. Only `toolId` is read, so the answer's other
 * fields may grow (`score`, `title`…).
 */
export async function searchTools(
  url: string,
  agent: Agent,
  q: string,
  appId: string | undefined,
): Promise<SearchAnswer> {
  const query = new URLSearchParams({ q, limit: '10', ...(appId ? { appId } : {}) });
  const started = performance.now();
  const reply = await fetch(`${url}/tools?${query}`, { headers: agentHeaders(agent) });
  const text = await reply.text();
  const ms = performance.now() - started;
  if (reply.status !== 200)
    throw new Error(`GET /tools?${query} answered ${reply.status}: ${text.slice(0, 200)}`);
  const answer = JSON.parse(text) as { tools: { toolId: string }[] };
  return { toolIds: answer.tools.map((tool) => tool.toolId), ms };
}
