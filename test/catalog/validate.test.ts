import { beforeAll, describe, expect, it } from 'vitest';
import type { CompiledTool } from '../../server/catalog/catalog.ts';
import { createUpstreamOpenApi, createUpstreamOpenApi30 } from '../support/upstream-openapi.ts';
import { compiled, compiledTool, oneOperation } from './helpers.ts';

const validateParameters = (tool: CompiledTool, parameters: unknown) => tool.validate(parameters);

let tools: Map<string, CompiledTool>;
let tools30: Map<string, CompiledTool>;

beforeAll(async () => {
  const toolMap = async (document: unknown) => (await compiled(document)).tools;
  tools = await toolMap(createUpstreamOpenApi('http://127.0.0.1:9'));
  tools30 = await toolMap(createUpstreamOpenApi30('http://127.0.0.1:9'));
});

function tool(name: string, from = tools): CompiledTool {
  const found = from.get(name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
}

describe('validateParameters', () => {
  it('accepts valid parameters', () => {
    expect(validateParameters(tool('getItem'), { itemId: 'a1', fields: ['title'] })).toEqual([]);
    expect(validateParameters(tool('createItem'), { body: { title: 'T', labels: ['x', 'y'] } })).toEqual([]);
    expect(
      validateParameters(tool('listItems'), {
        tags: ['a'],
        ids: [1, 2],
        filter: { status: 'open' },
        point: { x: 1, y: 2 },
        limit: 100,
        q: 'a/b',
      }),
    ).toEqual([]);
  });

  it('reports a missing required value at its own pointer', () => {
    expect(validateParameters(tool('getItem'), {})).toEqual([
      { path: '/itemId', message: 'Required parameter "itemId" is missing.' },
    ]);
    expect(validateParameters(tool('createItem'), {})).toEqual([
      { path: '/body', message: 'The request body is required.' },
    ]);
    expect(validateParameters(tool('createItem'), { body: { labels: [] } })).toEqual([
      { path: '/body/title', message: 'Required property "title" is missing.' },
    ]);
  });

  it('reports a wrong value at the pointer of that value, without coercing it', () => {
    expect(validateParameters(tool('listItems'), { limit: '5' })).toEqual([
      { path: '/limit', message: 'Must be an integer.' },
    ]);
    expect(validateParameters(tool('listItems'), { tags: 'a,b' })).toEqual([
      { path: '/tags', message: 'Must be an array.' },
    ]);
    expect(validateParameters(tool('listItems'), { ids: ['1', 2] })).toEqual([
      { path: '/ids/0', message: 'Must be an integer.' },
    ]);
    expect(validateParameters(tool('createItem'), { body: { title: 'T', labels: ['ok', 2, null] } })).toEqual(
      [
        { path: '/body/labels/1', message: 'Must be a string.' },
        { path: '/body/labels/2', message: 'Must be a string.' },
      ],
    );
    expect(validateParameters(tool('getItem'), { itemId: 5 })).toEqual([
      { path: '/itemId', message: 'Must be a string.' },
    ]);
  });

  it('reports every problem of a call at once', () => {
    expect(validateParameters(tool('listItems'), { limit: 0, point: { x: 1.5 }, filter: { a: 1 } })).toEqual([
      { path: '/filter/a', message: 'Must be a string.' },
      { path: '/point/x', message: 'Must be an integer.' },
      { path: '/limit', message: 'Must be at least 1.' },
    ]);
  });

  it('reports an unknown name at its own pointer', () => {
    expect(validateParameters(tool('getItem'), { itemId: 'a', foo: 1, 'a/b': 2 })).toEqual([
      { path: '/foo', message: 'Unknown parameter "foo": the tool has no parameter of that name.' },
      { path: '/a~1b', message: 'Unknown parameter "a/b": the tool has no parameter of that name.' },
    ]);
    expect(validateParameters(tool('createItem'), { body: { title: 'T', extra: true } })).toEqual([
      { path: '/body/extra', message: 'Unknown property "extra": the schema does not allow it.' },
    ]);
  });

  it('refuses a body where the tool has none, and parameters that are not an object', () => {
    expect(validateParameters(tool('getItem'), { itemId: 'a', body: {} })).toEqual([
      { path: '/body', message: 'Unknown parameter "body": the tool has no parameter of that name.' },
    ]);
    for (const value of [null, [], 'x', 3]) {
      expect(validateParameters(tool('getItem'), value)).toEqual([
        { path: '', message: 'Parameters must be an object.' },
      ]);
    }
  });

  it('phrases enum, format, length and bound failures as sentences', async () => {
    const op = await compiledTool(
      oneOperation('/x', 'get', {
        parameters: [
          { name: 'mode', in: 'query', schema: { type: 'string', enum: ['a', 'b'] } },
          { name: 'when', in: 'query', schema: { type: 'string', format: 'date-time' } },
          { name: 'email', in: 'query', schema: { type: 'string', format: 'email' } },
          {
            name: 'code',
            in: 'query',
            schema: { type: 'string', minLength: 2, maxLength: 3, pattern: '^[a-z]+$' },
          },
          { name: 'ratio', in: 'query', schema: { type: 'number', exclusiveMaximum: 1, multipleOf: 0.5 } },
          { name: 'ids', in: 'query', schema: { type: 'array', uniqueItems: true, maxItems: 2, items: {} } },
        ],
      }),
    );
    expect(
      validateParameters(op, {
        mode: 'c',
        when: 'yesterday',
        email: 'nope',
        code: 'A',
        ratio: 1,
        ids: [1, 1, 2],
      }),
    ).toEqual([
      { path: '/mode', message: 'Must be one of "a", "b".' },
      { path: '/when', message: 'Must be a valid date-time.' },
      { path: '/email', message: 'Must be a valid email.' },
      { path: '/code', message: 'Must be at least 2 characters long.' },
      { path: '/code', message: 'Must match the pattern ^[a-z]+$.' },
      { path: '/ratio', message: 'Must be less than 1.' },
      { path: '/ids', message: 'Must have at most 2 items.' },
      { path: '/ids', message: 'Must not repeat items (items 0 and 1 are equal).' },
    ]);
  });

  it('folds alternatives: the branch that fits the type speaks, otherwise the allowed types are named', async () => {
    const op = await compiledTool(
      oneOperation('/x', 'post', {
        parameters: [
          {
            name: 'v',
            in: 'query',
            schema: { oneOf: [{ type: 'string', enum: ['a'] }, { type: 'integer' }] },
          },
        ],
        requestBody: {
          content: {
            'application/json': {
              schema: {
                anyOf: [
                  { type: 'object', required: ['x'], properties: { x: { type: 'integer' } } },
                  { type: 'null' },
                ],
              },
            },
          },
        },
      }),
    );
    expect(validateParameters(op, { v: true, body: { x: 'no' } })).toEqual([
      { path: '/v', message: 'Must be a string or an integer.' },
      { path: '/body/x', message: 'Must be an integer.' },
    ]);
    expect(validateParameters(op, { v: 'b', body: null })).toEqual([
      { path: '/v', message: 'Must be one of "a".' },
    ]);
  });

  it('accepts null for a 3.0 nullable value and ignores read-only required properties', () => {
    expect(validateParameters(tool('createItem', tools30), { body: { title: 'T', labels: null } })).toEqual(
      [],
    );
    expect(validateParameters(tool('listItems', tools30), { limit: 0 })).toEqual([
      { path: '/limit', message: 'Must be greater than 0.' },
    ]);
  });

  it('validates circular schemas to any depth', async () => {
    const op = await compiledTool(
      oneOperation(
        '/tree',
        'post',
        {
          requestBody: { content: { 'application/json': { schema: { $ref: '#/components/schemas/Node' } } } },
        },
        {
          components: {
            schemas: {
              Node: {
                type: 'object',
                required: ['name'],
                properties: {
                  name: { type: 'string' },
                  children: { type: 'array', items: { $ref: '#/components/schemas/Node' } },
                },
                additionalProperties: false,
              },
            },
          },
        },
      ),
    );
    const tree = {
      name: 'a',
      children: [{ name: 'b', children: [{ name: 'c', children: [{ label: 'd' }] }] }],
    };
    expect(validateParameters(op, { body: tree })).toEqual([
      {
        path: '/body/children/0/children/0/children/0/name',
        message: 'Required property "name" is missing.',
      },
      {
        path: '/body/children/0/children/0/children/0/label',
        message: 'Unknown property "label": the schema does not allow it.',
      },
    ]);
  });

  it('omits an optional query, header or cookie parameter given as null, and refuses null elsewhere', async () => {
    const op = await compiledTool(
      oneOperation('/x/{id}', 'get', {
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'q', in: 'query', schema: { type: 'string' } },
          { name: 'X-Trace', in: 'header', schema: { type: 'string' } },
          { name: 'sid', in: 'cookie', schema: { type: 'string' } },
          { name: 'must', in: 'query', required: true, schema: { type: 'string' } },
        ],
      }),
    );
    expect(validateParameters(op, { id: 'a', q: null, 'X-Trace': null, sid: null, must: 'x' })).toEqual([]);
    expect(validateParameters(op, { id: null, must: null })).toEqual([
      { path: '/id', message: 'Must be a string.' },
      { path: '/must', message: 'Must be a string.' },
    ]);
  });

  it('never writes defaults into the caller’s parameters', async () => {
    const op = await compiledTool(
      oneOperation('/x', 'get', {
        parameters: [{ name: 'n', in: 'query', schema: { type: 'integer', default: 3 } }],
      }),
    );
    const parameters = {};
    expect(validateParameters(op, parameters)).toEqual([]);
    expect(parameters).toEqual({});
  });

  it('accepts patterns written for engines other than Unicode-mode ECMAScript', async () => {
    const op = await compiledTool(
      oneOperation('/x', 'get', {
        parameters: [{ name: 'code', in: 'query', schema: { type: 'string', pattern: '^[a-z]\\-[0-9]$' } }],
      }),
    );
    expect(validateParameters(op, { code: 'a-1' })).toEqual([]);
    expect(validateParameters(op, { code: 'a1' })).toEqual([
      { path: '/code', message: 'Must match the pattern ^[a-z]\\-[0-9]$.' },
    ]);
  });
});
