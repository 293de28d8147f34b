import { composeToolId } from '../../../shared/ids.ts';
import type { ToolView } from '../../../shared/schemas/agent.ts';
import { functionToolName, MODEL_TOOL_NAME_MAX } from '../../../shared/tool-names.ts';

/** Hex SHA-256 of a UTF-8 string, with Web Crypto (Node.js, Deno, Bun, browsers, workers). */
async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/**
 * The function name of each tool (`<appId>__<toolName>`, ≤ 64 characters, shared/tool-names.ts),
 * as a map from name to tool: the way back from what the model calls to the composite id.
 *
 * Two ids can give one plain name (`a__b` + `c` and `a` + `b__c`); then each of them takes the
 * hashed form (first 55 characters, `_`, 8 hex digits of the SHA-256 of its composite id), which
 * the hash keeps apart.
 */
export async function nameTools(tools: readonly ToolView[]): Promise<Map<string, ToolView>> {
  const digests = new Map<string, string>();
  await Promise.all(
    tools.map(async (tool) => {
      const id = composeToolId(tool.appId, tool.name);
      digests.set(id, await sha256Hex(id));
    }),
  );
  const digestOf = (text: string): string => {
    const digest = digests.get(text);
    if (digest === undefined) throw new Error(`no digest computed for ${text}`);
    return digest;
  };
  const byPlainName = new Map<string, ToolView[]>();
  for (const tool of tools) {
    const name = functionToolName(tool.appId, tool.name, digestOf);
    byPlainName.set(name, [...(byPlainName.get(name) ?? []), tool]);
  }
  const named = new Map<string, ToolView>();
  for (const [name, group] of byPlainName) {
    if (group.length === 1 && group[0]) {
      named.set(name, group[0]);
      continue;
    }
    for (const tool of group) {
      named.set(hashedName(name, digestOf(composeToolId(tool.appId, tool.name))), tool);
    }
  }
  return named;
}

/** The hashed form of shared/tool-names.ts: 55 characters, `_`, 8 hex digits. */
function hashedName(name: string, digest: string): string {
  return `${name.slice(0, MODEL_TOOL_NAME_MAX - 9)}_${digest.slice(0, 8)}`;
}

/**
 * The name of a tool found after the first ones were named (a search): its own name, unless that
 * is already another tool's (`taken`: name → composite id), then the hashed form. Names given
 * earlier never change, so a model's earlier calls keep working.
 */
export async function nameAmong(taken: ReadonlyMap<string, string>, tool: ToolView): Promise<string> {
  const id = composeToolId(tool.appId, tool.name);
  const digest = await sha256Hex(id);
  const name = functionToolName(tool.appId, tool.name, () => digest);
  const owner = taken.get(name);
  return owner === undefined || owner === id ? name : hashedName(name, digest);
}
