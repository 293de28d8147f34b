/** The tool catalog: OpenAPI documents → tools, their parameter validators and upstream requests. */
export { type CompiledApp, type CompiledTool, compileApp, compileParsed } from './catalog.ts';
export { documentServerUrl, type ParsedDocument, type ParseOptions, parseDocument } from './document.ts';
export {
  type BuildOptions,
  type BuildOutcome,
  buildUpstreamRequest,
  type UpstreamRequest,
} from './request.ts';
export { deriveTools, JSON_SCHEMA_DIALECT } from './tools.ts';
export type {
  JsonSchema,
  OpenApiDocument,
  OpenApiVersion,
  Outcome,
  ParameterLocation,
  ParameterStyle,
  Tool,
  ToolBody,
  ToolParameter,
} from './types.ts';
export { parametersValidator, validateParameters } from './validate.ts';
