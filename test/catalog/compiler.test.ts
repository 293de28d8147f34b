/**
 * The compile worker reads registration bodies (server/catalog/compiler.ts `readBody`): the body
 * comes back with its document stood in for, and a compile of the handle compiles that document —
 * the one of its own body, whatever other bodies were read meanwhile.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { DocumentCompiler } from '../../server/catalog/compiler.ts';
import { TEXT_STAND_IN } from '../../server/catalog/stand-in.ts';
import { largeDocument } from '../support/fixtures/openapi/real-cases.ts';

const bytesOf = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
const registration = (
  operations: number,
  openapi: unknown = largeDocument('https://api.example.test', operations),
) => bytesOf({ provider: 'acme.read', openapi, auth: { type: 'none' } });

describe('DocumentCompiler.readBody', () => {
  const compiler = new DocumentCompiler();
  afterAll(async () => {
    await compiler.close();
  });

  it('answers the body with its document stood in for, and compiles the document of its own body', async () => {
    const first = await compiler.readBody(registration(2));
    const second = await compiler.readBody(registration(3));
    if (!first.ok || !second.ok) throw new Error('the bodies should read');
    expect(first.value.body).toEqual({ provider: 'acme.read', openapi: {}, auth: { type: 'none' } });
    // The worker kept the second body's document; the first is read again from its bytes.
    const compiledFirst = await compiler.compile(first.value.document);
    const compiledSecond = await compiler.compile(second.value.document);
    expect([
      compiledFirst.ok && compiledFirst.value.tools,
      compiledSecond.ok && compiledSecond.value.tools,
    ]).toEqual([
      ['replaceThing0', 'replaceThing1'],
      ['replaceThing0', 'replaceThing1', 'replaceThing2'],
    ]);
    expect(compiler.jobs).toBe(2);
    // The bytes went to the worker with the compile: a handle compiles once.
    await expect(compiler.compile(first.value.document)).rejects.toThrow('compiled already');
  }, 60_000);

  it('stands in for a document given as text, and gives no handle when there is no document', async () => {
    const text = await compiler.readBody(
      registration(1, JSON.stringify(largeDocument('https://api.example.test', 1))),
    );
    expect(text.ok && text.value.body).toEqual({
      provider: 'acme.read',
      openapi: TEXT_STAND_IN,
      auth: { type: 'none' },
    });
    for (const [body, seen] of [
      [
        { provider: 'acme.read', openapi: 42 },
        { provider: 'acme.read', openapi: 42 },
      ],
      [
        { provider: 'acme.read', openapi: '' },
        { provider: 'acme.read', openapi: '' },
      ],
      [{ provider: 'acme.read' }, { provider: 'acme.read' }],
      [[{ openapi: {} }], []],
      ['a string', TEXT_STAND_IN],
      [7, 7],
    ] as const) {
      const read = await compiler.readBody(bytesOf(body));
      expect(read.ok && [read.value.body, read.value.document]).toEqual([seen, null]);
    }
  });

  it('refuses malformed and too deeply nested bodies, and answers refused once closed', async () => {
    const encode = (text: string) => new TextEncoder().encode(text);
    expect(await compiler.readBody(encode('{"provider":'))).toEqual({ ok: false, error: 'malformed_json' });
    expect(await compiler.readBody(encode(`{"a":${'['.repeat(200)}${']'.repeat(200)}}`))).toEqual({
      ok: false,
      error: 'too_deep',
    });
    const closing = new DocumentCompiler();
    const pending = closing.readBody(registration(1));
    await closing.close();
    expect(await pending).toEqual({ ok: false, error: { refused: 'The server is shutting down.' } });
  });
});
