/**
 * Types shared by the catalog modules: the parts of an OpenAPI document we read, and the tools
 * derived from it. The document types are loose on purpose: a registered document is checked
 * field by field before anything relies on a field's shape.
 */
import type { Issue } from '../../shared/errors.ts';

export type { Issue };

/** A typed outcome: the value, or the problems that prevented it. */
export type Outcome<T> = ({ ok: true } & T) | { ok: false; issues: Issue[] };

export type JsonObject = Record<string, unknown>;

/** A JSON Schema (2020-12) as plain data. */
export type JsonSchema = JsonObject | boolean;

export type OpenApiVersion = '3.0' | '3.1';

/** An OpenAPI 3.x document as parsed JSON. */
export type OpenApiDocument = JsonObject & { openapi: string };

export const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
export type HttpMethod = (typeof HTTP_METHODS)[number];

export const PARAMETER_LOCATIONS = ['path', 'query', 'header', 'cookie'] as const;
export type ParameterLocation = (typeof PARAMETER_LOCATIONS)[number];

export type ParameterStyle =
  | 'matrix'
  | 'label'
  | 'simple'
  | 'form'
  | 'spaceDelimited'
  | 'pipeDelimited'
  | 'deepObject';

/** The styles OpenAPI allows per location; the first is the default. */
export const STYLES_BY_LOCATION: Record<ParameterLocation, readonly ParameterStyle[]> = {
  path: ['simple', 'label', 'matrix'],
  query: ['form', 'spaceDelimited', 'pipeDelimited', 'deepObject'],
  header: ['simple'],
  cookie: ['form'],
};

/** One OpenAPI parameter of a tool, with OpenAPI's defaults filled in. */
export interface ToolParameter {
  name: string;
  in: ParameterLocation;
  required: boolean;
  /** JSON Schema 2020-12 of the value (3.0 schemas converted). */
  schema: JsonSchema;
  style: ParameterStyle;
  explode: boolean;
  allowReserved: boolean;
  /**
   * Set when the parameter is described by `content` instead of `schema`: the value is sent
   * serialized in this media type (JSON media types as JSON text, others as plain text).
   */
  contentType?: string;
}

/** The JSON request body of a tool. */
export interface ToolBody {
  required: boolean;
  schema: JsonSchema;
  /** The JSON media type sent as Content-Type (`application/json` unless the document names another). */
  contentType: string;
}

/** An OpenAPI operation as a callable tool. */
export interface Tool {
  name: string;
  /** Upper-case HTTP method. */
  method: string;
  /** The OpenAPI path, e.g. `/items/{itemId}`. */
  pathTemplate: string;
  description: string;
  parameters: ToolParameter[];
  body: ToolBody | null;
  /** OAuth scopes of the operation's security requirement (or the document's), sorted, unique. */
  scopes: string[];
  /** Media types of the operation's 2xx responses, for the Accept header; null when none are declared. */
  accept: string | null;
  /** JSON Schema 2020-12 of the closed `parameters` object a caller sends. */
  parametersSchema: JsonObject;
}
