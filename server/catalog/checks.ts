/**
 * Checks of a registered document that toolgate relies on, each problem at the JSON Pointer of
 * its definition (a `$ref`'d parameter is reported where it is defined). They run before the
 * full OpenAPI schema validation, whose messages carry no pointer, so the common mistakes get
 * precise answers. Pointers here are relative to the document.
 */
import type { Issue } from '../../shared/errors.ts';
import { pickJsonContent } from './media.ts';
import {
  credentialParameterKeys,
  excludedBecause,
  follow,
  listOperations,
  mergedParameters,
  type OperationEntry,
  parameterKey,
  TOKEN,
  templateNames,
} from './operations.ts';
import { child, isObject } from './pointer.ts';
import { findSchemas } from './refs.ts';
import { createSchemaConverter } from './schema.ts';
import {
  type JsonObject,
  type OpenApiVersion,
  PARAMETER_LOCATIONS,
  type ParameterLocation,
  STYLES_BY_LOCATION,
} from './types.ts';
import { createAjv, errorsToIssues } from './validate.ts';

/** Tool names, from CONTRACT.md §1. */
export const OPERATION_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$/;

class IssueList {
  private readonly byKey = new Map<string, Issue>();
  add(path: string, message: string): void {
    this.byKey.set(`${path}\u0000${message}`, { path, message });
  }
  get list(): Issue[] {
    return [...this.byKey.values()];
  }
}

export function checkDocument(document: JsonObject, version: OpenApiVersion): Issue[] {
  const issues = new IssueList();
  checkInfo(document, issues);
  checkSchemas(document, version, issues);
  if (document.paths !== undefined && !isObject(document.paths)) {
    issues.add('/paths', 'paths must be an object mapping paths to path items.');
    return issues.list;
  }
  const schemes = securitySchemes(document, issues);
  checkSecurity(document.security, '/security', schemes, issues);
  const credentials = credentialParameterKeys(document);

  for (const [path, raw] of Object.entries(isObject(document.paths) ? document.paths : {})) {
    const at = child('/paths', path);
    if (!path.startsWith('/')) issues.add(at, `Path "${path}" must begin with "/".`);
    checkTemplate(path, at, issues);
    if (!isObject(follow(document, raw, at).value)) issues.add(at, 'A path item must be an object.');
  }

  const operationIds = new Map<string, string>();
  for (const entry of listOperations(document)) {
    const { value: operation, pointer } = entry.operation;
    for (const owner of [entry.pathItem, entry.operation]) checkParameterList(document, owner, issues);
    checkPathParameters(document, entry, issues);
    checkSecurity(operation.security, child(pointer, 'security'), schemes, issues);
    const body = checkRequestBody(document, entry, issues);

    const id = operation.operationId;
    if (id === undefined) continue;
    const idAt = child(pointer, 'operationId');
    if (typeof id !== 'string' || !OPERATION_ID.test(id)) {
      issues.add(
        idAt,
        `operationId ${JSON.stringify(id)} must match ${OPERATION_ID.source}: it names a tool.`,
      );
      continue;
    }
    const first = operationIds.get(id);
    if (first !== undefined) {
      issues.add(idAt, `operationId "${id}" is already used by ${first}.`);
      continue;
    }
    operationIds.set(id, `${entry.method.toUpperCase()} ${entry.path}`);
    checkToolNames(document, entry, body, credentials, issues);
  }
  if (operationIds.size === 0 && !issues.list.some((issue) => issue.path.endsWith('/operationId'))) {
    issues.add(
      isObject(document.paths) ? '/paths' : '',
      'The document defines no operation with an operationId, so it would give no tools.',
    );
  }
  return issues.list;
}

/**
 * Every schema must be a valid JSON Schema (3.0 ones once converted), or no validator can be built
 * for the tools that use it. The OpenAPI 3.1 specification validation does not look inside schemas.
 */
function checkSchemas(document: JsonObject, version: OpenApiVersion, issues: IssueList): void {
  const converter = createSchemaConverter(document, version, { keepRefs: true });
  const ajv = metaValidator();
  for (const { pointer, schema } of findSchemas(document)) {
    if (ajv.validateSchema(converter.convert(schema))) continue;
    // The meta-schema's alternatives can give several messages for one keyword: the first says enough.
    const reported = new Set<string>();
    for (const issue of errorsToIssues(ajv.errors ?? [], 'schema')) {
      if (reported.has(issue.path)) continue;
      reported.add(issue.path);
      issues.add(pointer + issue.path, `Not a valid schema: ${lowerFirst(issue.message)}`);
    }
  }
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

let meta: ReturnType<typeof createAjv> | undefined;
function metaValidator(): ReturnType<typeof createAjv> {
  meta ??= createAjv();
  return meta;
}

function checkInfo(document: JsonObject, issues: IssueList): void {
  if (!isObject(document.info)) {
    issues.add('/info', 'info must be an object with a title and a version.');
    return;
  }
  for (const field of ['title', 'version']) {
    if (typeof document.info[field] !== 'string')
      issues.add(child('/info', field), `${field} must be a string.`);
  }
}

function checkTemplate(path: string, at: string, issues: IssueList): void {
  let open = false;
  for (const char of path) {
    if (char !== '{' && char !== '}') continue;
    if ((char === '{') === open) {
      issues.add(at, `Path "${path}" has unbalanced braces.`);
      return;
    }
    open = char === '{';
  }
  if (open) {
    issues.add(at, `Path "${path}" has unbalanced braces.`);
    return;
  }
  const names = templateNames(path);
  if (names.some((name) => name === '')) issues.add(at, `Path "${path}" has an empty {} expression.`);
  const repeated = names.find((name, index) => names.indexOf(name) !== index);
  if (repeated !== undefined) issues.add(at, `Path "${path}" uses {${repeated}} more than once.`);
}

/** The document's security scheme types by name. */
function securitySchemes(document: JsonObject, issues: IssueList): Map<string, string> {
  const types = new Map<string, string>();
  const components = document.components;
  if (!isObject(components) || components.securitySchemes === undefined) return types;
  if (!isObject(components.securitySchemes)) {
    issues.add('/components/securitySchemes', 'securitySchemes must be an object.');
    return types;
  }
  for (const [name, raw] of Object.entries(components.securitySchemes)) {
    const scheme = follow(document, raw, child('/components/securitySchemes', name));
    const value = scheme.value;
    if (!isObject(value) || typeof value.type !== 'string') {
      issues.add(scheme.pointer, 'A security scheme must be an object with a type.');
      continue;
    }
    types.set(name, value.type);
    if (value.type === 'apiKey' && !['header', 'query', 'cookie'].includes(String(value.in))) {
      issues.add(child(scheme.pointer, 'in'), 'An apiKey scheme must be in "header", "query" or "cookie".');
    }
  }
  return types;
}

function checkSecurity(security: unknown, at: string, schemes: Map<string, string>, issues: IssueList): void {
  if (security === undefined) return;
  if (!Array.isArray(security)) {
    issues.add(at, 'security must be an array of security requirements.');
    return;
  }
  for (const [index, requirement] of security.entries()) {
    if (!isObject(requirement)) {
      issues.add(child(at, index), 'A security requirement must be an object.');
      continue;
    }
    for (const [name, scopes] of Object.entries(requirement)) {
      const where = child(at, index, name);
      if (!schemes.has(name)) {
        issues.add(where, `Security scheme "${name}" is not defined in components.securitySchemes.`);
      } else if (!Array.isArray(scopes) || scopes.some((scope) => typeof scope !== 'string')) {
        issues.add(where, 'A security requirement lists its scopes as an array of strings.');
      }
    }
  }
}

/** One `parameters` list (of a path item or an operation) on its own. */
function checkParameterList(
  document: JsonObject,
  owner: { value: JsonObject; pointer: string },
  issues: IssueList,
): void {
  const list = owner.value.parameters;
  const at = child(owner.pointer, 'parameters');
  if (list === undefined) return;
  if (!Array.isArray(list)) {
    issues.add(at, 'parameters must be an array.');
    return;
  }
  const seen = new Set<string>();
  for (const [index, raw] of list.entries()) {
    const { value, pointer } = follow(document, raw, child(at, index));
    if (!isObject(value)) {
      issues.add(pointer, 'A parameter must be an object.');
      continue;
    }
    if (typeof value.name !== 'string' || value.name === '') {
      issues.add(child(pointer, 'name'), 'A parameter needs a non-empty name.');
      continue;
    }
    if (value.name === '__proto__') {
      // JavaScript validators (ajv among them) can't tell that property from an object's prototype.
      issues.add(child(pointer, 'name'), 'A parameter can\'t be named "__proto__".');
      continue;
    }
    if (!PARAMETER_LOCATIONS.includes(value.in as ParameterLocation)) {
      issues.add(child(pointer, 'in'), `in must be one of ${PARAMETER_LOCATIONS.join(', ')}.`);
      continue;
    }
    const location = value.in as ParameterLocation;
    const key = parameterKey(location, value.name);
    if (seen.has(key)) {
      issues.add(child(at, index), `Parameter "${value.name}" in ${location} is listed twice.`);
    }
    seen.add(key);
    checkParameter(value, location, pointer, issues);
  }
}

function checkParameter(
  parameter: JsonObject,
  location: ParameterLocation,
  at: string,
  issues: IssueList,
): void {
  const name = String(parameter.name);
  if (location === 'path' && parameter.required !== true) {
    issues.add(child(at, 'required'), `Path parameter "${name}" must have required: true.`);
  }
  if ((location === 'header' || location === 'cookie') && !TOKEN.test(name)) {
    issues.add(child(at, 'name'), `"${name}" is not a valid ${location} name.`);
  }
  const hasSchema = parameter.schema !== undefined;
  const hasContent = parameter.content !== undefined;
  if (hasSchema === hasContent) {
    issues.add(at, `Parameter "${name}" must have either a schema or a content, not both or neither.`);
  } else if (hasContent && (!isObject(parameter.content) || Object.keys(parameter.content).length !== 1)) {
    issues.add(child(at, 'content'), `The content of parameter "${name}" must have exactly one media type.`);
  }
  if (parameter.style !== undefined && !STYLES_BY_LOCATION[location].includes(parameter.style as never)) {
    issues.add(
      child(at, 'style'),
      `A ${location} parameter's style must be one of ${STYLES_BY_LOCATION[location].join(', ')}.`,
    );
  }
  for (const flag of ['required', 'explode', 'allowReserved', 'deprecated']) {
    if (parameter[flag] !== undefined && typeof parameter[flag] !== 'boolean') {
      issues.add(child(at, flag), `${flag} must be true or false.`);
    }
  }
}

/** Template expressions and path parameters must match one to one. */
function checkPathParameters(document: JsonObject, entry: OperationEntry, issues: IssueList): void {
  const names = new Set(templateNames(entry.path));
  const declared = new Set<string>();
  for (const { value, pointer } of mergedParameters(document, entry)) {
    if (value.in !== 'path') continue;
    declared.add(String(value.name));
    if (!names.has(String(value.name))) {
      issues.add(
        child(pointer, 'name'),
        `Path parameter "${value.name}" does not appear in "${entry.path}".`,
      );
    }
  }
  for (const name of names) {
    if (name !== '' && !declared.has(name)) {
      issues.add(entry.operation.pointer, `Path parameter "${name}" of "${entry.path}" is not declared.`);
    }
  }
}

/** Whether the operation has a JSON body a tool sends; a required body in other media types is refused. */
function checkRequestBody(document: JsonObject, entry: OperationEntry, issues: IssueList): boolean {
  const raw = entry.operation.value.requestBody;
  if (raw === undefined) return false;
  const { value, pointer } = follow(document, raw, child(entry.operation.pointer, 'requestBody'));
  if (!isObject(value) || !isObject(value.content)) {
    issues.add(pointer, 'A request body must be an object with a content map.');
    return false;
  }
  if (pickJsonContent(value.content)) return true;
  if (value.required === true && typeof entry.operation.value.operationId === 'string') {
    const types = Object.keys(value.content).join(', ') || 'no media type';
    issues.add(
      child(pointer, 'content'),
      `The operation requires a request body in ${types}; a tool sends JSON bodies only.`,
    );
  }
  return false;
}

/** A tool's `parameters` object is keyed by name alone: two parameters can't share one. */
function checkToolNames(
  document: JsonObject,
  entry: OperationEntry,
  hasBody: boolean,
  credentials: Set<string>,
  issues: IssueList,
): void {
  const taken = new Map<string, string>(hasBody ? [['body', 'the request body']] : []);
  for (const { value, pointer } of mergedParameters(document, entry)) {
    if (excludedBecause(value, credentials) !== null) continue;
    const name = String(value.name);
    const other = taken.get(name);
    if (other !== undefined) {
      issues.add(
        child(pointer, 'name'),
        `Parameter "${name}" in ${value.in} clashes with ${other}: a tool's parameters are keyed by name.`,
      );
      continue;
    }
    taken.set(name, `the ${value.in} parameter of that name`);
  }
}
