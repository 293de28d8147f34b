import { beforeAll, describe, expect, it } from 'vitest';
import { buildUpstreamRequest } from '../../server/catalog/request.ts';
import type { Tool, ToolParameter } from '../../server/catalog/types.ts';
import { createUpstreamOpenApi } from '../support/upstream-openapi.ts';
import { compiled } from './helpers.ts';

const BASE = 'http://api.example.test:8080/v1';
let tools: Map<string, Tool>;

beforeAll(async () => {
  tools = new Map(
    [...(await compiled(createUpstreamOpenApi(BASE))).tools].map(([name, { tool }]) => [name, tool]),
  );
});

function tool(name: string): Tool {
  const found = tools.get(name);
  if (!found) throw new Error(`no tool ${name}`);
  return found;
}

function param(
  name: string,
  location: ToolParameter['in'],
  extra: Partial<ToolParameter> = {},
): ToolParameter {
  const style = { path: 'simple', query: 'form', header: 'simple', cookie: 'form' }[
    location
  ] as ToolParameter['style'];
  return {
    key: name,
    name,
    in: location,
    required: location === 'path',
    style,
    explode: style === 'form',
    allowReserved: false,
    ...extra,
  };
}

function makeTool(pathTemplate: string, parameters: ToolParameter[], extra: Partial<Tool> = {}): Tool {
  return {
    name: 't',
    operationId: null,
    method: 'GET',
    pathTemplate,
    fixedQuery: null,
    summary: null,
    operationDescription: null,
    tags: [],
    description: '',
    parameters,
    body: null,
    scopes: [],
    accept: null,
    parametersSchema: {},
    ...extra,
  };
}

/** The URL of a successful build, as text. */
function urlOf(t: Tool, parameters: Record<string, unknown>, base = BASE): string {
  const result = buildUpstreamRequest(t, base, parameters);
  if (!result.ok) throw new Error(JSON.stringify(result.error));
  return result.value.url.href;
}

describe('buildUpstreamRequest: the whole request', () => {
  it('builds method, URL, headers and JSON body', () => {
    expect(
      buildUpstreamRequest(tool('createItem'), BASE, { body: { title: 'Tea', labels: ['hot'] } }),
    ).toEqual({
      ok: true,
      value: {
        method: 'POST',
        url: new URL('http://api.example.test:8080/v1/items'),
        headers: { accept: 'application/json', 'content-type': 'application/json' },
        body: '{"title":"Tea","labels":["hot"]}',
      },
    });
  });

  it('sends no body and no content type when an optional body is absent', () => {
    const t = makeTool('/x', [], {
      method: 'PATCH',
      body: { required: false, kind: 'json', contentType: 'application/merge-patch+json' },
    });
    // Strictly: the request has no `body` key at all, not one holding undefined.
    expect(buildUpstreamRequest(t, BASE, {})).toStrictEqual({
      ok: true,
      value: { method: 'PATCH', url: new URL('http://api.example.test:8080/v1/x'), headers: {} },
    });
    const withBody = buildUpstreamRequest(t, BASE, { body: null });
    expect(withBody).toMatchObject({
      ok: true,
      value: { body: 'null', headers: { 'content-type': 'application/merge-patch+json' } },
    });
  });
});

describe('buildUpstreamRequest: path parameters', () => {
  it('joins the base path and the operation path', () => {
    expect(urlOf(tool('getItem'), { itemId: 'a1' })).toBe('http://api.example.test:8080/v1/items/a1');
    expect(urlOf(tool('getItem'), { itemId: 'a1' }, 'http://api.example.test:8080/v1/')).toBe(
      'http://api.example.test:8080/v1/items/a1',
    );
    expect(urlOf(tool('getItem'), { itemId: 'a1' }, 'http://api.example.test')).toBe(
      'http://api.example.test/items/a1',
    );
  });

  it('percent-encodes everything but unreserved characters', () => {
    expect(urlOf(tool('getItem'), { itemId: "a/b?c#d%e@f:g h\\i;j,k=l&m+n'o(p)*!~._-é" })).toBe(
      'http://api.example.test:8080/v1/items/a%2Fb%3Fc%23d%25e%40f%3Ag%20h%5Ci%3Bj%2Ck%3Dl%26m%2Bn%27o%28p%29%2A%21~._-%C3%A9',
    );
  });

  it.each([
    ['../admin', '/v1/items/..%2Fadmin'],
    ['..%2fadmin', '/v1/items/..%252fadmin'],
    ['%2e%2e%2f%2e%2e%2fadmin', '/v1/items/%252e%252e%252f%252e%252e%252fadmin'],
    ['%2e%2e', '/v1/items/%252e%252e'],
    ['//evil.example', '/v1/items/%2F%2Fevil.example'],
    ['@evil.example', '/v1/items/%40evil.example'],
    ['http://evil.example/', '/v1/items/http%3A%2F%2Fevil.example%2F'],
    ['..\\..\\admin', '/v1/items/..%5C..%5Cadmin'],
    ['\\\\evil.example\\x', '/v1/items/%5C%5Cevil.example%5Cx'],
    ['a\r\nHost: evil', '/v1/items/a%0D%0AHost%3A%20evil'],
  ])('keeps %j inside its segment', (itemId, pathname) => {
    const result = buildUpstreamRequest(tool('getItem'), BASE, { itemId });
    if (!result.ok) throw new Error(JSON.stringify(result.error));
    expect(result.value.url.origin).toBe('http://api.example.test:8080');
    expect(result.value.url.pathname).toBe(pathname);
    expect(result.value.url.search).toBe('');
  });

  it.each(['.', '..', ''])('refuses %j as a whole path segment', (itemId) => {
    expect(buildUpstreamRequest(tool('getItem'), BASE, { itemId })).toEqual({
      ok: false,
      error: [
        {
          path: '/itemId',
          message: 'Must not make an empty, "." or ".." path segment: it would address another resource.',
        },
      ],
    });
  });

  it('allows dots inside a segment', () => {
    expect(urlOf(tool('getItem'), { itemId: '...' })).toBe('http://api.example.test:8080/v1/items/...');
    expect(urlOf(makeTool('/files/{name}.json', [param('name', 'path')]), { name: '.' })).toBe(
      'http://api.example.test:8080/v1/files/..json',
    );
  });

  it('reports a missing path parameter', () => {
    expect(buildUpstreamRequest(tool('getItem'), BASE, {})).toEqual({
      ok: false,
      error: [{ path: '/itemId', message: 'Required parameter "itemId" is missing.' }],
    });
  });

  it('serializes simple, label and matrix styles', () => {
    const t = (style: ToolParameter['style'], explode: boolean) =>
      makeTool('/p/{v}', [param('v', 'path', { style, explode })]);
    const cases: [ToolParameter['style'], boolean, unknown, string][] = [
      ['simple', false, 5, '/v1/p/5'],
      ['simple', false, ['a', 'b c'], '/v1/p/a,b%20c'],
      ['simple', false, { r: 1, g: 2 }, '/v1/p/r,1,g,2'],
      ['simple', true, { r: 1, g: 2 }, '/v1/p/r=1,g=2'],
      ['label', false, 'x', '/v1/p/.x'],
      ['label', false, ['a', 'b'], '/v1/p/.a,b'],
      ['label', true, ['a', 'b'], '/v1/p/.a.b'],
      ['label', true, { r: 1, g: 2 }, '/v1/p/.r=1.g=2'],
      ['matrix', false, 'x', '/v1/p/;v=x'],
      ['matrix', false, ['a', 'b'], '/v1/p/;v=a,b'],
      ['matrix', true, ['a', 'b'], '/v1/p/;v=a;v=b'],
      ['matrix', false, { r: 1, g: 2 }, '/v1/p/;v=r,1,g,2'],
      ['matrix', true, { r: 1, g: 2 }, '/v1/p/;r=1;g=2'],
    ];
    for (const [style, explode, value, pathname] of cases) {
      const result = buildUpstreamRequest(t(style, explode), BASE, { v: value });
      expect({
        style,
        explode,
        value,
        pathname: result.ok ? result.value.url.pathname : result.error,
      }).toEqual({
        style,
        explode,
        value,
        pathname,
      });
    }
  });

  it('refuses a label value that would make a ".." segment', () => {
    const t = makeTool('/p/{v}', [param('v', 'path', { style: 'label' })]);
    expect(buildUpstreamRequest(t, BASE, { v: '.' })).toEqual({
      ok: false,
      error: [
        {
          path: '/v',
          message: 'Must not make an empty, "." or ".." path segment: it would address another resource.',
        },
      ],
    });
  });
});

describe('buildUpstreamRequest: query parameters', () => {
  it('serializes each style', () => {
    const result = buildUpstreamRequest(tool('listItems'), BASE, {
      tags: ['a b', 'c&d'],
      ids: [1, 2, 3],
      sizes: ['s', 'm'],
      colors: ['red', 'blue'],
      filter: { status: 'open', owner: 'me&you' },
      point: { x: 1, y: 2 },
      limit: 10,
      q: 'a/b?c:d@e&f=g#h+i',
    });
    if (!result.ok) throw new Error(JSON.stringify(result.error));
    expect(result.value.url.search).toBe(
      '?tags=a%20b&tags=c%26d&ids=1,2,3&sizes=s%20m&colors=red|blue&filter[status]=open&filter[owner]=me%26you' +
        '&x=1&y=2&limit=10&q=a/b?c:d@e%26f%3Dg%23h+i',
    );
  });

  it('serializes non-exploded objects and delimited arrays as one value', () => {
    const t = (style: ToolParameter['style'], explode: boolean) =>
      makeTool('/q', [param('v', 'query', { style, explode })]);
    const cases: [ToolParameter['style'], boolean, unknown, string][] = [
      ['form', true, 'x y', '?v=x%20y'],
      ['form', true, true, '?v=true'],
      // An optional parameter given as null is left out (docs/reference.md "Agent endpoints").
      ['form', true, null, ''],
      ['form', false, { r: 1, g: 'a,b' }, '?v=r,1,g,a%2Cb'],
      ['spaceDelimited', false, ['a', 'b'], '?v=a%20b'],
      ['spaceDelimited', true, ['a', 'b'], '?v=a&v=b'],
      ['pipeDelimited', false, ['a|b', 'c'], '?v=a%7Cb|c'],
      ['deepObject', true, { a: { b: 1 }, c: ['x', 'y'] }, '?v[a][b]=1&v[c]=x&v[c]=y'],
      ['deepObject', true, ['x', 'y z'], '?v[]=x&v[]=y%20z'],
      ['form', true, [], ''],
      ['form', true, {}, ''],
    ];
    for (const [style, explode, value, search] of cases) {
      const result = buildUpstreamRequest(t(style, explode), BASE, { v: value });
      expect({ style, explode, value, search: result.ok ? result.value.url.search : result.error }).toEqual({
        style,
        explode,
        value,
        search,
      });
    }
  });

  it('sends a parameter described by JSON content as JSON text', () => {
    const t = makeTool('/q', [param('where', 'query', { contentType: 'application/json' })]);
    expect(urlOf(t, { where: { a: [1, 'b'] } })).toBe(
      'http://api.example.test:8080/v1/q?where=%7B%22a%22%3A%5B1%2C%22b%22%5D%7D',
    );
  });

  it('keeps the base URL’s query and lets the service’s credentials replace the caller’s pairs', () => {
    const result = buildUpstreamRequest(
      tool('listItems'),
      `${BASE}?api-version=2`,
      { point: { api_key: 'mine', x: 1 } },
      {
        credentials: { query: { api_key: 's3cret/=' } },
      },
    );
    if (!result.ok) throw new Error(JSON.stringify(result.error));
    expect(result.value.url.search).toBe('?api-version=2&x=1&api_key=s3cret%2F%3D');
  });
});

describe('buildUpstreamRequest: headers and cookies', () => {
  it('sends header parameters as headers and cookie parameters as one Cookie header', () => {
    const result = buildUpstreamRequest(tool('echo'), BASE, {
      'X-Trace-Id': 'trace 1',
      'X-Tags': ['a', 'b'],
      theme: 'dark; admin=1',
      q: 'x',
    });
    expect(result).toEqual({
      ok: true,
      value: {
        method: 'GET',
        url: new URL('http://api.example.test:8080/v1/echo?q=x'),
        headers: {
          'x-trace-id': 'trace 1',
          'x-tags': 'a,b',
          cookie: 'theme=dark%3B%20admin%3D1',
          accept: 'application/json',
        },
      },
    });
  });

  it.each([
    ['a\r\nX-Injected: 1', 'CR/LF'],
    ['a\nb', 'LF'],
    ['a\u0000b', 'NUL'],
    ['a\u007fb', 'DEL'],
    ['café', 'non-ASCII'],
  ])('refuses a header value with %j (%s)', (value) => {
    expect(buildUpstreamRequest(tool('echo'), BASE, { 'X-Trace-Id': value })).toEqual({
      ok: false,
      error: [
        {
          path: '/X-Trace-Id',
          message: 'Must be printable ASCII text without line breaks or control characters.',
        },
      ],
    });
  });

  it.each([
    'Authorization',
    'Host',
    'Cookie',
    'Content-Length',
    'Transfer-Encoding',
    'Connection',
    'Proxy-Authorization',
  ])('never lets a header parameter set %s', (name) => {
    const t = makeTool('/h', [param(name, 'header')]);
    expect(buildUpstreamRequest(t, BASE, { [name]: 'x' })).toEqual({
      ok: false,
      error: [{ path: `/${name}`, message: `Header "${name}" can't be set by a tool call.` }],
    });
  });

  it('lets the service’s credential headers replace any caller value', () => {
    const t = makeTool('/h', [param('X-Api-Key', 'header')]);
    const result = buildUpstreamRequest(
      t,
      BASE,
      { 'X-Api-Key': 'caller' },
      { credentials: { headers: { 'X-Api-Key': 'service' } } },
    );
    expect(result).toMatchObject({ ok: true, value: { headers: { 'x-api-key': 'service' } } });
  });
});

describe('buildUpstreamRequest: never throws', () => {
  it('answers with issues for unusable base URLs', () => {
    expect(buildUpstreamRequest(tool('getText'), 'not a url', {})).toEqual({
      ok: false,
      error: [{ path: '', message: 'The app has no valid base URL.' }],
    });
    expect(buildUpstreamRequest(tool('getText'), 'file:///etc', {})).toEqual({
      ok: false,
      error: [{ path: '', message: 'The app base URL must be http or https.' }],
    });
  });

  it('refuses text that is not well-formed Unicode', () => {
    expect(buildUpstreamRequest(tool('getItem'), BASE, { itemId: 'a\uD800' })).toEqual({
      ok: false,
      error: [{ path: '/itemId', message: 'Must be well-formed Unicode text (it holds a lone surrogate).' }],
    });
  });

  it('treats a non-object parameters value as no parameters', () => {
    expect(buildUpstreamRequest(tool('getText'), BASE, null)).toMatchObject({ ok: true });
    expect(buildUpstreamRequest(tool('getItem'), BASE, 'x')).toEqual({
      ok: false,
      error: [{ path: '/itemId', message: 'Required parameter "itemId" is missing.' }],
    });
  });

  it('sends a header and a path parameter named like Object.prototype members as ordinary values', () => {
    const t = makeTool('/p/{__proto__}', [param('__proto__', 'path'), param('__proto__', 'header')]);
    const result = buildUpstreamRequest(t, BASE, JSON.parse('{"__proto__": "v"}'));
    expect(result).toEqual({
      ok: true,
      value: {
        method: 'GET',
        url: new URL('http://api.example.test:8080/v1/p/v'),
        headers: JSON.parse('{"__proto__": "v"}'),
      },
    });
  });

  it('reads only own properties of the parameters object', () => {
    const t = makeTool('/h', [param('constructor', 'query'), param('toString', 'query')]);
    expect(urlOf(t, {})).toBe('http://api.example.test:8080/v1/h');
    expect(urlOf(t, JSON.parse('{"constructor":"c","__proto__":"p"}'))).toBe(
      'http://api.example.test:8080/v1/h?constructor=c',
    );
  });
});

// Issue 29: behaviours a mutation run of request.ts found unguarded.
describe('buildUpstreamRequest: the defences and choices no other test holds', () => {
  const LEAVES = {
    ok: false,
    error: [{ path: '', message: "The request would leave the operation's URL." }],
  };

  it('refuses, as a last check, a template whose own text would leave the operation’s URL', () => {
    // The URL parser resolves the document's `..`: the request would address /v1/admin.
    expect(buildUpstreamRequest(makeTool('/files/../admin', []), BASE, {})).toEqual(LEAVES);
    expect(buildUpstreamRequest(makeTool('/files/%2e%2e/admin', []), BASE, {})).toEqual(LEAVES);
    expect(urlOf(makeTool('/files/..admin', []), {})).toBe('http://api.example.test:8080/v1/files/..admin');
  });

  it('checks every segment a reserved expansion adds for "." and ".."', () => {
    const t = makeTool('/files/{path}', [param('path', 'path', { allowReserved: true })]);
    expect(urlOf(t, { path: 'docs/readme.md' })).toBe('http://api.example.test:8080/v1/files/docs/readme.md');
    for (const path of ['docs/../secrets', 'docs/./x', 'docs//x', 'docs/..']) {
      expect(buildUpstreamRequest(t, BASE, { path })).toEqual({
        ok: false,
        error: [
          {
            path: '/path',
            message: 'Must not make an empty, "." or ".." path segment: it would address another resource.',
          },
        ],
      });
    }
  });

  it('fills each placeholder with its own path parameter, never a query parameter of the same name', () => {
    const t = makeTool('/repos/{owner}/{repo}/items/{id}', [
      param('id', 'query', { key: 'query_id' }),
      param('repo', 'path'),
      param('owner', 'path'),
      param('id', 'path'),
    ]);
    expect(urlOf(t, { owner: 'octo', repo: 'hello', id: 'p1', query_id: 'q1' })).toBe(
      'http://api.example.test:8080/v1/repos/octo/hello/items/p1?id=q1',
    );
  });

  it('builds on an https base URL and drops any number of trailing slashes of its path', () => {
    expect(urlOf(tool('getItem'), { itemId: 'a1' }, 'https://api.example.test/v1')).toBe(
      'https://api.example.test/v1/items/a1',
    );
    expect(urlOf(tool('getItem'), { itemId: 'a1' }, 'http://api.example.test/v1///')).toBe(
      'http://api.example.test/v1/items/a1',
    );
  });

  it('answers the issues of a body it cannot write, and no request', () => {
    const t = makeTool('/notes', [], {
      method: 'POST',
      body: { required: true, kind: 'text', contentType: 'text/plain' },
    });
    expect(buildUpstreamRequest(t, BASE, { body: { not: 'text' } })).toEqual({
      ok: false,
      error: [{ path: '/body', message: 'Must be a string.' }],
    });
  });

  it('writes a body only for a tool that has one and a value that is given', () => {
    const json = makeTool('/notes', [], {
      method: 'POST',
      body: { required: false, kind: 'json', contentType: 'application/json' },
    });
    expect(buildUpstreamRequest(json, BASE, { body: undefined })).toEqual({
      ok: true,
      value: { method: 'POST', url: new URL(`${BASE}/notes`), headers: {} },
    });
    expect(buildUpstreamRequest(makeTool('/n', []), BASE, { body: 'x' })).toEqual({
      ok: true,
      value: { method: 'GET', url: new URL(`${BASE}/n`), headers: {} },
    });
  });

  it('refuses a template that does not start a new segment after the base path', () => {
    // '/v1' + 'x' would address /v1x, a sibling of the operation's URL, not a resource under it.
    expect(buildUpstreamRequest(makeTool('x', []), BASE, {})).toEqual(LEAVES);
  });

  it('percent-encodes what a path cannot hold raw in the template’s own text', () => {
    expect(urlOf(makeTool('/a b|c"d', []), {})).toBe('http://api.example.test:8080/v1/a%20b%7Cc%22d');
  });

  it('appends the query a path key carries, encoded, after the base URL’s and before the call’s', () => {
    const t = makeTool('/op', [param('q', 'query')], { fixedQuery: 'action=list all&x=é|y' });
    expect(urlOf(t, { q: 'z' }, `${BASE}?k=1`)).toBe(
      'http://api.example.test:8080/v1/op?k=1&action=list%20all&x=%C3%A9%7Cy&q=z',
    );
  });

  it('keeps the base URL’s query when the call adds no query and no credential', () => {
    expect(urlOf(makeTool('/op', []), {}, `${BASE}?api-version=2`)).toBe(
      'http://api.example.test:8080/v1/op?api-version=2',
    );
  });

  it('sends a credential’s query pair when it is the only query there is', () => {
    const result = buildUpstreamRequest(
      makeTool('/op', []),
      BASE,
      {},
      {
        credentials: { query: { api_key: 's' } },
      },
    );
    expect(result.ok && result.value.url.href).toBe('http://api.example.test:8080/v1/op?api_key=s');
  });

  it('lets a credential replace a base URL pair whose name is not valid percent-encoding', () => {
    const result = buildUpstreamRequest(
      makeTool('/op', []),
      `${BASE}?%zz=1&b=2`,
      {},
      {
        credentials: { query: { '%zz': 's' } },
      },
    );
    expect(result.ok && result.value.url.href).toBe('http://api.example.test:8080/v1/op?b=2&%25zz=s');
  });

  it('refuses null for a path parameter (an empty segment) and sends it empty for a required query one', () => {
    const t = makeTool('/items/{id}', [param('id', 'path'), param('q', 'query', { required: true })]);
    expect(buildUpstreamRequest(t, BASE, { id: null, q: 'x' })).toEqual({
      ok: false,
      error: [
        {
          path: '/id',
          message: 'Must not make an empty, "." or ".." path segment: it would address another resource.',
        },
      ],
    });
    expect(urlOf(t, { id: 'a', q: null })).toBe('http://api.example.test:8080/v1/items/a?q=');
  });

  it('builds nothing when a placeholder has no parameter to fill it', () => {
    expect(buildUpstreamRequest(makeTool('/items/{id}', []), BASE, {})).toEqual({ ok: false, error: [] });
  });

  it('joins several cookie parameters into one Cookie header with "; "', () => {
    const t = makeTool('/c', [param('a', 'cookie'), param('b', 'cookie')]);
    const result = buildUpstreamRequest(t, BASE, { a: '1', b: 'two' });
    expect(result.ok && result.value.headers).toEqual({ cookie: 'a=1; b=two' });
  });

  it('refuses lone surrogates inside arrays and object keys too', () => {
    const t = makeTool('/s', [param('tags', 'query'), param('filter', 'query', { style: 'deepObject' })]);
    const LONE = 'Must be well-formed Unicode text (it holds a lone surrogate).';
    expect(buildUpstreamRequest(t, BASE, { tags: ['ok', 'b\uDC00'] })).toEqual({
      ok: false,
      error: [{ path: '/tags', message: LONE }],
    });
    expect(buildUpstreamRequest(t, BASE, { filter: { 'k\uD800': 'v' } })).toEqual({
      ok: false,
      error: [{ path: '/filter', message: LONE }],
    });
    expect(urlOf(t, { tags: ['ok', '\uD83D\uDE00'] })).toBe(
      'http://api.example.test:8080/v1/s?tags=ok&tags=%F0%9F%98%80',
    );
  });
});
