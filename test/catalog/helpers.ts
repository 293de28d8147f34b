/** Small documents and shortcuts for the catalog tests. */
import { type CompiledApp, type CompiledTool, compileApp } from '../../server/catalog/catalog.ts';
import type { ParsedDocument } from '../../server/catalog/document.ts';
import { parseDocument } from '../../server/catalog/document.ts';
import type { Tool } from '../../server/catalog/types.ts';

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

export async function parsed(document: unknown): Promise<ParsedDocument> {
  const result = await parseDocument(document);
  if (!result.ok) throw new Error(`document refused: ${JSON.stringify(result.issues)}`);
  return result;
}

export async function compiled(document: unknown): Promise<CompiledApp> {
  const result = await compileApp(document);
  if (!result.ok) throw new Error(`document refused: ${JSON.stringify(result.issues)}`);
  return result.app;
}

export async function compiledTool(document: unknown, name = 'op'): Promise<CompiledTool> {
  const tool = (await compiled(document)).tools.get(name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool;
}

export async function toolOf(document: unknown, name = 'op'): Promise<Tool> {
  return (await compiledTool(document, name)).tool;
}
