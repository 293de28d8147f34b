/**
 * Types shared by the catalog modules: the parts of an OpenAPI document we read, and the tools
 * derived from it. The document types are loose on purpose: a registered document is real-world
 * input, read field by field before anything relies on a field's shape.
 */
import type { Issue } from '../../shared/errors.ts';

export type { Issue };

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

/** One OpenAPI parameter of a tool, with OpenAPI's defaults filled in. Its schema is in the tool's `parametersSchema`. */
export interface ToolParameter {
  /** The key in the caller's `parameters`: the name, or `<in>.<name>` when another parameter has it. */
  key: string;
  /** The name on the wire. */
  name: string;
  in: ParameterLocation;
  required: boolean;
  style: ParameterStyle;
  explode: boolean;
  /**
   * Query: RFC 3986 reserved characters stay raw. Path (`allowReserved` or `x-multi-segment`):
   * the value may hold `/` separators, each segment still percent-encoded.
   */
  allowReserved: boolean;
  /**
   * Set when the parameter is described by `content` instead of `schema`: the value is sent
   * serialized in this media type (JSON media types as JSON text, others as plain text).
   */
  contentType?: string;
}

/** How a request body is written (docs/reference.md "Administration"). */
export type BodyKind = 'json' | 'form' | 'multipart' | 'text' | 'binary';

/** Per-property encoding of a form or multipart body (the media type's `encoding` map). */
export interface PropertyEncoding {
  style?: string;
  explode?: boolean;
  contentType?: string;
}

/** The request body of a tool. */
export interface ToolBody {
  required: boolean;
  kind: BodyKind;
  /** The media type sent as Content-Type (multipart gets its boundary added). */
  contentType: string;
  /** form and multipart: the `encoding` map of the media type. */
  encoding?: Record<string, PropertyEncoding>;
  /** multipart: properties whose values are files (`{ base64, filename?, content_type? }`, or arrays of them). */
  files?: string[];
}

/** An OpenAPI operation as a callable tool. */
export interface Tool {
  name: string;
  operationId: string | null;
  /** Upper-case HTTP method. */
  method: string;
  /** The OpenAPI path without fragment and query, e.g. `/items/{itemId}`. */
  pathTemplate: string;
  /** The path key as the document writes it, when it differs from `pathTemplate` (a fragment or query). */
  documentPath?: string;
  /** The query a path key carried (`/search?type=user` → `type=user`), sent with every call; null when none. */
  fixedQuery: string | null;
  summary: string | null;
  /** The operation's own description (`description` below joins summary and description). */
  operationDescription: string | null;
  /** Summary and description, else `<METHOD> <path>`. */
  description: string;
  parameters: ToolParameter[];
  body: ToolBody | null;
  /** OAuth scopes of the operation's security requirement (or the document's), sorted, unique. */
  scopes: string[];
  /** The operation's `tags` (for search, docs/reference.md "Tool search"). */
  tags: string[];
  /** Media types of the operation's 2xx responses, for the Accept header; null when none are declared. */
  accept: string | null;
  /** JSON Schema 2020-12 of the closed `parameters` object a caller sends. */
  parametersSchema: JsonObject;
  /**
   * A tool of an MCP server (method `MCP`, `pathTemplate` its name upstream): the server's own
   * annotations (`readOnlyHint`, …), kept as it wrote them. Absent for OpenAPI operations.
   */
  annotations?: JsonObject;
}

/** An operation registration left out, and why (docs/reference.md "Administration"). */
export interface SkippedOperation {
  method: string;
  path: string;
  operationId?: string;
  reason: string;
}

/** The parameter the app's `api_key` auth fills in (`auth.in` + `auth.name`). */
export interface ServiceParameter {
  in: 'header' | 'query';
  name: string;
}
