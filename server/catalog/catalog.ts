/**
 * An app's OpenAPI document → its compiled tools. Done once per registration (and when a server
 * loads the app); a call then costs one map lookup and one compiled validator run.
 *
 * @example
 * const compiled = await compileApp(registration.openapi);
 * if (!compiled.ok) return apiError('invalid_request', 'The OpenAPI document has problems.', { issues: compiled.issues });
 * const tool = compiled.app.tools.get('getItem');
 * const issues = tool.validate(parameters);
 * const request = tool.buildRequest(baseUrl, parameters, { credentials: { headers: { 'x-api-key': key } } });
 */
import { documentServerUrl, type ParsedDocument, type ParseOptions, parseDocument } from './document.ts';
import { child } from './pointer.ts';
import { type BuildOptions, type BuildOutcome, buildUpstreamRequest } from './request.ts';
import { deriveTools } from './tools.ts';
import type { Issue, OpenApiVersion, Outcome, Tool } from './types.ts';
import { parametersValidator, validateParameters } from './validate.ts';

export interface CompiledTool {
  tool: Tool;
  /** The problems of a call's `parameters` (empty when valid), pointers into `parameters`. */
  validate(parameters: unknown): Issue[];
  /** The upstream request for validated `parameters`. */
  buildRequest(baseUrl: string, parameters: unknown, options?: BuildOptions): BuildOutcome;
}

export interface CompiledApp {
  version: OpenApiVersion;
  /** The document's `servers[0].url` (variables at their defaults), the base URL when the registration has none. */
  serverUrl: string | null;
  /** By tool name, in document order. */
  tools: Map<string, CompiledTool>;
}

/** Parses, checks and compiles a registration's document; issues point into the registration body. */
export async function compileApp(
  openapi: unknown,
  options: ParseOptions = {},
): Promise<Outcome<{ app: CompiledApp }>> {
  const parsed = await parseDocument(openapi, options);
  if (!parsed.ok) return parsed;
  return compileParsed(parsed, options);
}

/** Compiles the tools of an already parsed document. */
export function compileParsed(
  parsed: ParsedDocument,
  options: ParseOptions = {},
): Outcome<{ app: CompiledApp }> {
  const prefix = options.pointerPrefix ?? '/openapi';
  const tools = new Map<string, CompiledTool>();
  const issues: Issue[] = [];
  for (const tool of deriveTools(parsed.document, parsed.version)) {
    try {
      parametersValidator(tool); // compiled now, so a broken schema is a registration problem
      tools.set(tool.name, {
        tool,
        validate: (parameters) => validateParameters(tool, parameters),
        buildRequest: (baseUrl, parameters, buildOptions) =>
          buildUpstreamRequest(tool, baseUrl, parameters, buildOptions),
      });
    } catch (error) {
      // A schema ajv can't compile (e.g. a `pattern` that is not a valid Unicode regular expression).
      const reason = error instanceof Error ? error.message : String(error);
      issues.push({
        path: child(`${prefix}/paths`, tool.pathTemplate, tool.method.toLowerCase()),
        message: `The parameter schemas of operation "${tool.name}" can't be compiled: ${reason}.`,
      });
    }
  }
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, app: { version: parsed.version, serverUrl: documentServerUrl(parsed.document), tools } };
}
