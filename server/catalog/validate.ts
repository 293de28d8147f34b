/**
 * Validating a caller's `parameters` against a tool's schema (docs/reference.md "Agent endpoints"): ajv, JSON Schema
 * 2020-12, every error collected, no coercion, no defaults written, formats checked. Each app has
 * its own ajv (`catalog.ts`), and each tool's validator is compiled on its first call.
 *
 * Issues: a missing required value at its own pointer (`/itemId`, `/body/title`), a wrong value at
 * the value's pointer (`/limit`, `/body/labels/1`), an unknown name at its own pointer (`/foo`).
 */
import { Ajv2020, type ErrorObject } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import type { Issue } from '../../shared/errors.ts';
import { escapeToken } from './pointer.ts';

/**
 * Patterns are compiled in Unicode mode like JSON Schema asks, falling back to plain mode for the
 * many documents written for other engines (`\-` is a syntax error in Unicode mode only).
 */
const lenientRegExp = Object.assign(
  (pattern: string, flags: string): RegExp => {
    try {
      return new RegExp(pattern, flags);
    } catch {
      return new RegExp(pattern, flags.replace('u', ''));
    }
  },
  { code: 'lenientRegExp' },
);

/** An ajv for request schemas. Compiled validators stay usable after their schema is removed. */
export function createAjv(): Ajv2020 {
  const ajv = new Ajv2020({
    code: { regExp: lenientRegExp },
    strict: false,
    allErrors: true,
    coerceTypes: false,
    useDefaults: false,
    removeAdditional: false,
    validateFormats: true,
    logger: false,
  });
  addFormats(ajv);
  return ajv;
}

/** What the root of the validated value is, for wording messages about its own properties. */
export type Subject = 'parameters' | 'schema';

/**
 * Ajv's errors as issues, one human sentence each. Branches of a failed `anyOf`/`oneOf` are folded:
 * when only one branch fits the value's type, its errors are reported; otherwise the choice is.
 */
export function errorsToIssues(errors: ErrorObject[], subject: Subject): Issue[] {
  const seen = new Set<string>();
  const issues: Issue[] = [];
  for (const error of fold(errors)) {
    const issue = toIssue(error, subject);
    if (!issue) continue;
    const key = `${issue.path}\u0000${issue.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
  }
  return issues;
}

function fold(errors: ErrorObject[]): ErrorObject[] {
  let result = errors.filter((error) => error.keyword !== 'if');
  const choices = result
    .filter((error) => error.keyword === 'anyOf' || error.keyword === 'oneOf')
    .sort((a, b) => a.schemaPath.length - b.schemaPath.length);
  for (const choice of choices) {
    if (!result.includes(choice)) continue;
    const prefix = `${choice.schemaPath}/`;
    const inBranches = result.filter((error) => error.schemaPath.startsWith(prefix));
    const branches = new Map<string, ErrorObject[]>();
    for (const error of inBranches) {
      const branch = error.schemaPath.slice(prefix.length).split('/')[0] ?? '';
      branches.set(branch, [...(branches.get(branch) ?? []), error]);
    }
    // A branch that wants another type for the value itself was not the one the caller meant.
    const typeError = (list: ErrorObject[]) =>
      list.find((error) => error.keyword === 'type' && error.instancePath === choice.instancePath);
    const meant = [...branches.values()].filter((list) => !typeError(list));
    const tooMany = choice.keyword === 'oneOf' && Array.isArray(choice.params.passingSchemas);
    if (meant.length === 1 && !tooMany) {
      const kept = new Set(meant[0]);
      result = result.filter((error) => error !== choice && (!inBranches.includes(error) || kept.has(error)));
      continue;
    }
    result = result.filter((error) => !inBranches.includes(error));
    if (meant.length === 0 && branches.size > 0 && !tooMany) {
      // Every branch wanted another type: say which types would do.
      const types = [...branches.values()].flatMap((list) => typesOf(typeError(list)?.params.type));
      result = result.map((error) =>
        error === choice ? { ...choice, keyword: 'type', params: { type: [...new Set(types)] } } : error,
      );
    }
  }
  return result;
}

function typesOf(type: unknown): string[] {
  if (Array.isArray(type)) return type.map(String);
  return typeof type === 'string' ? type.split(',') : [];
}

function toIssue(error: ErrorObject, subject: Subject): Issue | null {
  const at = error.instancePath;
  const p = error.params as Record<string, unknown>;
  const top = at === '' && subject === 'parameters';
  switch (error.keyword) {
    case 'required': {
      const name = String(p.missingProperty);
      const message = top
        ? name === 'body'
          ? 'The request body is required.'
          : `Required parameter "${name}" is missing.`
        : `Required property "${name}" is missing.`;
      return { path: `${at}/${escapeToken(name)}`, message };
    }
    case 'additionalProperties':
    case 'unevaluatedProperties': {
      const name = String(p.additionalProperty ?? p.unevaluatedProperty);
      const message = top
        ? `Unknown parameter "${name}": the tool has no parameter of that name.`
        : `Unknown property "${name}": the schema does not allow it.`;
      return { path: `${at}/${escapeToken(name)}`, message };
    }
    case 'type':
      if (top) return { path: at, message: 'Parameters must be an object.' };
      return { path: at, message: `Must be ${typesOf(p.type).map(withArticle).join(' or ')}.` };
    case 'enum':
      return {
        path: at,
        message: `Must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}.`,
      };
    case 'const':
      return { path: at, message: `Must be ${JSON.stringify(p.allowedValue)}.` };
    case 'format':
      return { path: at, message: `Must be a valid ${String(p.format)}.` };
    case 'pattern':
      return { path: at, message: `Must match the pattern ${String(p.pattern)}.` };
    case 'minLength':
    case 'maxLength':
      return {
        path: at,
        message: `Must be at ${bound(error.keyword)} ${plural(p.limit, 'character')} long.`,
      };
    case 'minItems':
    case 'maxItems':
      return { path: at, message: `Must have at ${bound(error.keyword)} ${plural(p.limit, 'item')}.` };
    case 'minProperties':
    case 'maxProperties':
      return {
        path: at,
        message: `Must have at ${bound(error.keyword)} ${plural(p.limit, 'property', 'properties')}.`,
      };
    case 'minimum':
    case 'maximum':
      return { path: at, message: `Must be at ${bound(error.keyword)} ${String(p.limit)}.` };
    case 'exclusiveMinimum':
      return { path: at, message: `Must be greater than ${String(p.limit)}.` };
    case 'exclusiveMaximum':
      return { path: at, message: `Must be less than ${String(p.limit)}.` };
    case 'multipleOf':
      return { path: at, message: `Must be a multiple of ${String(p.multipleOf)}.` };
    case 'uniqueItems':
      return {
        path: at,
        message: `Must not repeat items (items ${String(p.j)} and ${String(p.i)} are equal).`,
      };
    case 'anyOf':
      return { path: at, message: 'Must match at least one of the allowed schemas.' };
    case 'oneOf':
      return Array.isArray(p.passingSchemas)
        ? { path: at, message: 'Must match exactly one of the allowed schemas, but matches several.' }
        : { path: at, message: 'Must match exactly one of the allowed schemas.' };
    case 'not':
      return { path: at, message: 'Must not match the excluded schema.' };
    case 'false schema':
      return { path: at, message: 'No value is allowed here.' };
    default: {
      const text = error.message ?? 'is invalid';
      return { path: at, message: `${text.charAt(0).toUpperCase()}${text.slice(1)}.` };
    }
  }
}

function bound(keyword: string): 'least' | 'most' {
  return keyword.startsWith('min') ? 'least' : 'most';
}

function plural(count: unknown, one: string, many = `${one}s`): string {
  return `${String(count)} ${count === 1 ? one : many}`;
}

function withArticle(type: string): string {
  if (type === 'null') return 'null';
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}
