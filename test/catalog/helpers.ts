/** Small documents and shortcuts for the catalog tests. */
import {
  type CompiledApp,
  type CompiledTool,
  type CompileOptions,
  compileApp,
} from '../../server/catalog/catalog.ts';
import type { Issue, Tool } from '../../server/catalog/types.ts';

type Json = Record<string, unknown>;

export const okResponse = { 200: { description: 'ok' } };

/** A minimal valid document around `paths` (and optional components). */
export function doc(paths: Json, extra: Json = {}, openapi = '3.1.0'): Json {
  return { openapi, info: { title: 'test', version: '1' }, paths, ...extra };
}

/** A document with one operation `GET /things/{id}`-style: `op` is merged into the operation. */
export function oneOperation(
  path: string,
  method: string,
  op: Json,
  extra: Json = {},
  openapi = '3.1.0',
): Json {
  return doc({ [path]: { [method]: { operationId: 'op', responses: okResponse, ...op } } }, extra, openapi);
}

export async function compiled(document: unknown, options: CompileOptions = {}): Promise<CompiledApp> {
  const result = await compileApp(document, options);
  if (!result.ok) throw new Error(`document refused: ${JSON.stringify(result.error)}`);
  return result.value.app;
}

/** The issues that refuse a document (throws when it is accepted). */
export async function refused(document: unknown, options: CompileOptions = {}): Promise<Issue[]> {
  const result = await compileApp(document, options);
  if (result.ok) throw new Error('document accepted');
  return result.error;
}

export async function compiledTool(document: unknown, name = 'op'): Promise<CompiledTool> {
  const tool = (await compiled(document)).tools.get(name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool;
}

export async function toolOf(document: unknown, name = 'op'): Promise<Tool> {
  return (await compiledTool(document, name)).tool;
}

/** The tools of a document by name. */
export async function toolsOf(document: unknown): Promise<Map<string, Tool>> {
  return new Map([...(await compiled(document)).tools].map(([name, { tool }]) => [name, tool]));
}
