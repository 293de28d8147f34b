/**
 * An app's document → its catalog, and a stored catalog → callable tools.
 *
 * `compileDocument` is the expensive part (run off the event loop by `compiler.ts`); it answers the
 * catalog as JSON text, which is stored beside the document. `openCatalog` turns that text into
 * tools cheaply: each tool's schema stays text until it is first shown, and its validator is
 * compiled on its first call, into an ajv that belongs to this app alone.
 *
 * @example
 * const compiled = await compileDocument(registration.openapi, { service: { in: 'header', name: 'X-Api-Key' } });
 * if (!compiled.ok) return apiError('invalid_request', 'The OpenAPI document has problems.', { issues: compiled.error });
 * const app = openCatalog(compiled.value.catalogText);
 * const tool = app?.tools.get('getItem');
 * const issues = tool.validate(parameters);
 * const request = tool.buildRequest(baseUrl, parameters, { credentials: { headers: { 'x-api-key': key } } });
 */
import type { Ajv2020, ValidateFunction } from 'ajv/dist/2020.js';
import { err, ok, type Result } from '../result.ts';
import { operationContexts } from '../search/context.ts';
import { buildSegment, type SearchableTool } from '../search/segment.ts';
import { toolViewText } from '../search/views.ts';
import { documentServerUrl, loadDocument } from './document.ts';
import { CATALOG_FORMAT } from './format.ts';
import { unpackText } from './packing.ts';
import { child } from './pointer.ts';
import { type BuildOptions, type BuildOutcome, buildUpstreamRequest } from './request.ts';
import { deriveTools } from './tools.ts';
import type { Issue, JsonObject, OpenApiVersion, ServiceParameter, SkippedOperation, Tool } from './types.ts';
import { createAjv, errorsToIssues } from './validate.ts';

export interface CompiledTool {
  readonly name: string;
  /** The tool, its `parametersSchema` parsed on first use. */
  readonly tool: Tool;
  /** The problems of a call's `parameters` (empty when valid), pointers into `parameters`. */
  validate(parameters: unknown): Issue[];
  /** The upstream request for validated `parameters`. */
  buildRequest(baseUrl: string, parameters: unknown, options?: BuildOptions): BuildOutcome;
  /** About how many characters the tool's definition takes in an answer (schema and description). */
  readonly size: number;
}

export interface CompiledApp {
  version: OpenApiVersion;
  /** The document's `servers[0].url` (variables at their defaults), the base URL when the registration has none. */
  serverUrl: string | null;
  /** By tool name, in document order. */
  tools: Map<string, CompiledTool>;
  /** Operations left out, with their reasons. */
  skipped: SkippedOperation[];
}

/** A tool as stored: its schema kept as JSON text. */
export type StoredTool = Omit<Tool, 'parametersSchema'> & { schema: string };

export interface StoredCatalog {
  format: number;
  version: OpenApiVersion;
  serverUrl: string | null;
  tools: StoredTool[];
  skipped: SkippedOperation[];
}

export interface CompileOptions {
  /** The parameter the app's api_key auth fills in, left out of every tool. */
  service?: ServiceParameter;
  /** Prepended to every issue's pointer (default `/openapi`: the document is the registration's `openapi`). */
  pointerPrefix?: string;
  /** The app's id and provider label: its words join every tool's in the search segment. */
  app?: { appId: string; provider: string };
  /** The input is an MCP server's `tools/list` (`{ tools: [...] }`, mcp-catalog.ts), not a document. */
  mcp?: boolean;
}

export interface CompiledDocument {
  /** The catalog as stored (`openCatalog` reads it). */
  catalogText: string;
  /** The document as stored: the registration's text, or its JSON. */
  documentText: string;
  /** The app's search segment as stored (server/search/segment.ts). */
  searchText: string;
  /** Each tool as searches show it (server/search/views.ts), in document order. */
  toolViews: Array<{ name: string; view: string }>;
  tools: string[];
  skipped: SkippedOperation[];
  serverUrl: string | null;
}

/** Reads, converts and compiles a registration's document; issues point into the registration body. */
export async function compileDocument(
  input: unknown,
  options: CompileOptions = {},
): Promise<Result<CompiledDocument, Issue[]>> {
  const prefix = options.pointerPrefix ?? '/openapi';
  const loaded = await loadDocument(input);
  if (!loaded.ok)
    return err(loaded.error.map((issue) => ({ path: prefix + issue.path, message: issue.message })));
  const document = loaded.value;
  const derived = deriveTools(document.document, document.version, {
    ajv: createAjv(),
    documentNodes: document.nodes,
    pointerPrefix: prefix,
    ...(options.service ? { service: options.service } : {}),
  });
  if (derived.issues.length > 0) return err(derived.issues);
  if (derived.tools.length === 0) {
    const issues: Issue[] = derived.skipped.slice(0, 100).map((operation) => ({
      path: child(`${prefix}/paths`, operation.path, operation.method.toLowerCase()),
      message: `No operation can be served: ${operation.reason}`,
    }));
    return err(
      issues.length > 0
        ? issues
        : [{ path: `${prefix}/paths`, message: 'The document defines no operation.' }],
    );
  }
  const serverUrl = documentServerUrl(document.document);
  const catalog: StoredCatalog = {
    format: CATALOG_FORMAT,
    version: document.version,
    serverUrl,
    tools: derived.tools.map(({ parametersSchema, ...tool }) => ({
      ...tool,
      schema: JSON.stringify(parametersSchema),
    })),
    skipped: derived.skipped,
  };
  const info = document.document.info as { title?: unknown } | undefined;
  return ok({
    catalogText: JSON.stringify(catalog),
    documentText: document.text,
    searchText: buildSegment(withContexts(document.document, derived.tools), {
      appId: options.app?.appId ?? '',
      provider: options.app?.provider ?? '',
      title: typeof info?.title === 'string' ? info.title : null,
    }),
    toolViews: derived.tools.map((tool) => ({ name: tool.name, view: toolViewText(tool) })),
    tools: derived.tools.map((tool) => tool.name),
    skipped: derived.skipped,
    serverUrl,
  });
}

/** The callable tools of a stored catalog (plain or packed text); null when unreadable or of another format. */
export function openCatalog(text: string): CompiledApp | null {
  let catalog: StoredCatalog;
  try {
    catalog = JSON.parse(unpackText(text)) as StoredCatalog;
  } catch {
    return null;
  }
  if (catalog?.format !== CATALOG_FORMAT || !Array.isArray(catalog.tools)) return null;
  let ajv: Ajv2020 | undefined;
  const appAjv = () => {
    ajv ??= createAjv();
    return ajv;
  };
  const tools = new Map<string, CompiledTool>();
  for (const stored of catalog.tools) tools.set(stored.name, new LazyTool(stored, appAjv));
  return { version: catalog.version, serverUrl: catalog.serverUrl, tools, skipped: catalog.skipped ?? [] };
}

/** Compiles in this thread: for tests and tools; the server compiles through `compiler.ts`. */
export async function compileApp(
  input: unknown,
  options: CompileOptions = {},
): Promise<Result<{ app: CompiledApp; documentText: string }, Issue[]>> {
  const compiled = await compileDocument(input, options);
  if (!compiled.ok) return compiled;
  const app = openCatalog(compiled.value.catalogText) as CompiledApp;
  return ok({ app, documentText: compiled.value.documentText });
}

class LazyTool implements CompiledTool {
  readonly name: string;
  readonly #stored: StoredTool;
  readonly #ajv: () => Ajv2020;
  #tool: Tool | undefined;
  #validator: ValidateFunction | Error | undefined;
  /** Keys of the optional query, header and cookie parameters: `null` there means "leave it out". */
  readonly #omittable: Set<string>;

  constructor(stored: StoredTool, ajv: () => Ajv2020) {
    this.name = stored.name;
    this.#stored = stored;
    this.#ajv = ajv;
    this.#omittable = new Set(
      stored.parameters.filter((p) => !p.required && p.in !== 'path').map((p) => p.key),
    );
  }

  get size(): number {
    return this.#stored.schema.length + this.#stored.description.length + this.#stored.pathTemplate.length;
  }

  get tool(): Tool {
    if (!this.#tool) {
      const { schema, ...rest } = this.#stored;
      this.#tool = { ...rest, parametersSchema: JSON.parse(schema) };
    }
    return this.#tool;
  }

  validate(parameters: unknown): Issue[] {
    const validator = this.#validatorOrError();
    if (validator instanceof Error) {
      return [{ path: '', message: `The tool's parameter schema can't be used: ${validator.message}` }];
    }
    const value = this.#withoutOmitted(parameters);
    return validator(value) ? [] : errorsToIssues(validator.errors ?? [], 'parameters');
  }

  buildRequest(baseUrl: string, parameters: unknown, options?: BuildOptions): BuildOutcome {
    return buildUpstreamRequest(this.tool, baseUrl, parameters, options);
  }

  #validatorOrError(): ValidateFunction | Error {
    if (!this.#validator) {
      const ajv = this.#ajv();
      const schema = this.tool.parametersSchema;
      try {
        this.#validator = ajv.compile(schema);
      } catch (error) {
        this.#validator = error instanceof Error ? error : new Error(String(error));
      } finally {
        // The function keeps what it needs; dropping the schema from ajv's cache keeps memory flat.
        ajv.removeSchema(schema);
      }
    }
    return this.#validator;
  }

  /** `parameters` without the optional query, header and cookie parameters given as `null`. */
  #withoutOmitted(parameters: unknown): unknown {
    if (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters)) return parameters;
    const record = parameters as Record<string, unknown>;
    if (!Object.entries(record).some(([key, value]) => value === null && this.#omittable.has(key)))
      return parameters;
    const copy: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(record)) {
      if (value === null && this.#omittable.has(key)) continue;
      Object.defineProperty(copy, key, { value, enumerable: true, writable: true, configurable: true });
    }
    return copy;
  }
}

/** The tools with what their document says around them, for the search segment. */
function withContexts(document: JsonObject, tools: readonly Tool[]): SearchableTool[] {
  const contexts = operationContexts(document, tools);
  return tools.map((tool, index) => ({
    ...tool,
    context: contexts[index]?.text ?? '',
    answers: contexts[index]?.answers ?? [],
  }));
}
