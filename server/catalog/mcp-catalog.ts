/**
 * An MCP server's `tools/list` → an app's catalog (docs/reference.md "Apps from MCP servers"), on
 * the compile worker like a document. Each MCP tool becomes a tool named by the operationId rule
 * (`toolNameFrom`), method `MCP`, path its name upstream, `parameters` its `inputSchema` — read by
 * the same schema converter as OpenAPI 3.1 schemas, so the same defences hold: references only
 * inside the schema, `$defs` cut at DEFS_BUDGET, a `$ref` bomb refused, patterns and the schema
 * itself checked, nesting bounded. A tool that cannot be served is `skipped` with its reason.
 */
import { toolNameFrom, uniqueToolName } from '../../shared/tool-names.ts';
import { err, ok, type Result } from '../result.ts';
import { buildSegment } from '../search/segment.ts';
import { toolViewText } from '../search/views.ts';
import type { CompiledDocument, CompileOptions, StoredCatalog } from './catalog.ts';
import { CATALOG_FORMAT } from './format.ts';
import { child, isObject } from './pointer.ts';
import { prune, SchemaConverter, Unservable } from './schema.ts';
import {
  DEFS_BUDGET,
  EXPANSION_EXPONENT,
  EXPANSION_FLOOR,
  findBadPattern,
  JSON_SCHEMA_DIALECT,
} from './tools.ts';
import type { Issue, JsonObject, JsonSchema, SkippedOperation, Tool } from './types.ts';
import { createAjv, errorsToIssues } from './validate.ts';

/** Nesting of a tool's schema, as for a request's JSON (docs/reference.md "Limits"). */
const MAX_SCHEMA_DEPTH = 128;
const MAX_TEXT = 64 * 1024;

/** Compiles `{ tools: [...] }` as read from the server; issues point into the registration (`/mcp`). */
export function compileMcpTools(
  input: unknown,
  options: CompileOptions = {},
): Result<CompiledDocument, Issue[]> {
  // A stored app's document is the list as JSON text.
  const value = typeof input === 'string' ? parseOrNull(input) : input;
  const listed = isObject(value) && Array.isArray(value.tools) ? value.tools : null;
  if (!listed) return err([{ path: '/mcp/url', message: 'The MCP server listed no tools.' }]);
  const ajv = createAjv();
  const tools: Tool[] = [];
  const skipped: SkippedOperation[] = [];
  const issues: Issue[] = [];
  const taken = new Set<string>();
  for (const [index, entry] of listed.entries()) {
    const upstream = isObject(entry) && typeof entry.name === 'string' ? entry.name : '';
    try {
      if (!isObject(entry) || upstream === '') throw new Unservable('it has no name');
      tools.push(mcpTool(entry, upstream, uniqueName(upstream, taken), ajv));
    } catch (error) {
      if (error instanceof Bomb) {
        issues.push({ path: child('/mcp/tools', index, 'inputSchema'), message: error.message });
      } else if (error instanceof Unservable) {
        skipped.push({ method: 'MCP', path: upstream, reason: `${upperFirst(error.message)}.` });
      } else {
        throw error;
      }
    }
  }
  if (issues.length > 0) return err(issues);
  if (tools.length === 0) {
    return err([
      {
        path: '/mcp/url',
        message:
          skipped.length > 0
            ? `No tool of the MCP server can be served: ${skipped[0]?.path}: ${skipped[0]?.reason}`
            : 'The MCP server lists no tools.',
      },
    ]);
  }
  const catalog: StoredCatalog = {
    format: CATALOG_FORMAT,
    version: '3.1',
    serverUrl: null,
    tools: tools.map(({ parametersSchema, ...tool }) => ({
      ...tool,
      schema: JSON.stringify(parametersSchema),
    })),
    skipped,
  };
  return ok({
    catalogText: JSON.stringify(catalog),
    documentText: JSON.stringify({ tools: listed }),
    searchText: buildSegment(tools, {
      appId: options.app?.appId ?? '',
      provider: options.app?.provider ?? '',
      title: null,
    }),
    toolViews: tools.map((tool) => ({ name: tool.name, view: toolViewText(tool) })),
    tools: tools.map((tool) => tool.name),
    skipped,
    serverUrl: null,
  });
}

/** A schema whose references would expand without bound: the registration is refused, as for a document. */
class Bomb extends Error {
  override readonly name = 'Bomb';
}

function uniqueName(upstream: string, taken: Set<string>): string {
  return uniqueToolName(toolNameFrom(upstream) || 'tool', taken);
}

function mcpTool(entry: JsonObject, upstream: string, name: string, ajv: ReturnType<typeof createAjv>): Tool {
  const input = entry.inputSchema;
  if (!isObject(input)) throw new Unservable('its inputSchema is not a JSON Schema object');
  if (input.type !== undefined && input.type !== 'object') {
    throw new Unservable('its inputSchema does not describe an object');
  }
  if (depthOver(input, MAX_SCHEMA_DEPTH)) {
    throw new Unservable(`its inputSchema is nested more than ${MAX_SCHEMA_DEPTH} levels deep`);
  }
  const parametersSchema = convertSchema(input);
  const badPattern = findBadPattern(parametersSchema);
  if (badPattern !== null) {
    throw new Unservable(`its inputSchema has a pattern that is not a regular expression: "${badPattern}"`);
  }
  if (!ajv.validateSchema(parametersSchema)) {
    const issue = errorsToIssues(ajv.errors ?? [], 'schema')[0];
    throw new Unservable(
      `its inputSchema is not a valid JSON Schema${issue ? ` (at ${issue.path || '/'}: ${issue.message.replace(/\.$/, '')})` : ''}`,
    );
  }
  const annotations = isObject(entry.annotations) ? entry.annotations : undefined;
  const title = text(entry.title) ?? text(annotations?.title);
  const description = text(entry.description);
  return {
    name,
    operationId: upstream,
    method: 'MCP',
    pathTemplate: upstream,
    fixedQuery: null,
    summary: title,
    operationDescription: description,
    description: description ?? title ?? `MCP tool ${upstream}`,
    parameters: [],
    body: null,
    scopes: [],
    tags: [],
    accept: null,
    parametersSchema,
    ...(annotations ? { annotations } : {}),
  };
}

/**
 * The inputSchema as a 2020-12 schema of its own: references resolve inside it (`#/$defs/…`,
 * `#/definitions/…`), each definition it reaches is carried under `$defs`.
 */
function convertSchema(input: JsonObject): JsonObject {
  const converter = new SchemaConverter(input, '3.1');
  const { $defs: _defs, definitions: _definitions, ...root } = input;
  const converted = converter.convert(root);
  const nodes = countNodes(input);
  const limit = Math.max(EXPANSION_FLOOR, Math.ceil(nodes ** EXPANSION_EXPONENT));
  if (converter.expandedSize(converted, limit + 1) > limit) {
    throw new Bomb(
      `This tool's inputSchema would expand to more than ${limit} nodes (references nested without bound, a "$ref bomb").`,
    );
  }
  const { defs, cut } = converter.defsFor(converted.refs.keys(), DEFS_BUDGET);
  const schema = (cut.size > 0 ? prune(converted.schema, cut) : converted.schema) as JsonObject;
  return {
    $schema: JSON_SCHEMA_DIALECT,
    ...(typeof schema === 'object' ? schema : {}),
    type: 'object',
    ...(Object.keys(defs).length > 0 ? { $defs: defs } : {}),
  };
}

/** Whether a JSON value nests deeper than `max` (iterative: a hostile schema cannot overflow the stack). */
function depthOver(value: unknown, max: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length > 0) {
    const [node, depth] = pending.pop() as [unknown, number];
    if (typeof node !== 'object' || node === null) continue;
    if (depth > max) return true;
    for (const item of Object.values(node)) pending.push([item, depth + 1]);
  }
  return false;
}

function countNodes(value: JsonSchema | unknown): number {
  let count = 0;
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const node = pending.pop();
    count += 1;
    if (typeof node === 'object' && node !== null) pending.push(...Object.values(node));
  }
  return count;
}

function text(value: unknown): string | null {
  return typeof value === 'string' && value.trim() !== '' ? value.slice(0, MAX_TEXT) : null;
}

function upperFirst(message: string): string {
  return message.charAt(0).toUpperCase() + message.slice(1);
}

function parseOrNull(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
