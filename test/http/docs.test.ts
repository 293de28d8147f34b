import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_STATUS } from '../../shared/errors.ts';
import { type Agent, asAgent, provisionAgent, registerApp } from '../support/agent.ts';
import { type PetsExample, petsRegistration, startPetsExample } from '../support/pets-example.ts';
import { call, startServer, type TestServer } from '../support/server.ts';

/** /openapi.json tells every status of every route; /docs renders it offline in a real browser. */

const CHROMIUM = '/usr/bin/chromium';

let server: TestServer;
let pets: PetsExample;
let agent: Agent;
beforeAll(async () => {
  [server, pets] = await Promise.all([startServer('pglite'), startPetsExample()]);
  // The repository's example app, which the document's examples are about.
  await registerApp(server, 'pets', petsRegistration(pets));
  agent = await provisionAgent(server, ['tools:execute']);
});
afterAll(async () => {
  await server?.close();
  await pets?.close();
});

// biome-ignore lint/suspicious/noExplicitAny: the document is read as plain JSON.
type Json = any;

describe('/openapi.json', () => {
  let document: Json;
  beforeAll(async () => {
    document = (await call(server.url, 'GET', '/openapi.json')).body;
  });

  it('answers every status /proxyV2 can, each with its codes, descriptions and contract bodies', () => {
    const responses = document.paths['/proxyV2'].post.responses;
    expect(Object.keys(responses).sort()).toEqual(
      [
        '200',
        '400',
        '401',
        '403',
        '404',
        '405',
        '409',
        '413',
        '415',
        '422',
        '429',
        '500',
        '502',
        '504',
      ].sort(),
    );
    const unauthorized = responses['401'];
    expect(Object.keys(unauthorized.content['application/json'].examples)).toEqual([
      'invalid_api_key',
      'invalid_client',
      'auth_required',
    ]);
    expect(unauthorized.description).toContain('`auth_required`: the tool acts for an end user');
    expect(unauthorized.description).not.toContain('Authorization not provided');
    expect(unauthorized.content['application/json'].examples.auth_required.value).toEqual({
      ok: false,
      error: 'auth_required',
      message: 'The user has not authorized this app.',
      auth_endpoint: '/initiateOAuth',
      app_id: 'github',
    });
    expect(Object.keys(responses['502'].content['application/json'].examples)).toEqual([
      'upstream_error',
      'upstream_unreachable',
      'upstream_too_large',
    ]);
    expect(responses['429'].headers['Retry-After']).toBeDefined();
  });

  it("shows /proxyV2's request and 200 answer as the example app really runs them", async () => {
    const operation = document.paths['/proxyV2'].post;
    const request = operation.requestBody.content['application/json'].example;
    expect(request).toEqual({ toolId: 'pets:::getPetById', parameters: { petId: 1 } });
    const example = operation.responses['200'].content['application/json'].example;
    const real = await call(server.url, 'POST', '/proxyV2', { ...asAgent(agent), body: request });
    expect(real.status).toBe(200);
    expect(example).toEqual({ ...real.body, meta: { ...real.body.meta, duration_ms: 12 } });
    // No schema-made placeholders: a duration is never negative.
    expect(
      operation.responses['200'].content['application/json'].schema.properties.meta.properties.duration_ms
        .minimum,
    ).toBe(0);
    for (const [path, item] of Object.entries<Json>(document.paths)) {
      expect(JSON.stringify(item), path).not.toMatch(/petstore|-9007199254740991/);
    }
  });

  it('gives every error example the status of its code, on every operation', () => {
    for (const [path, item] of Object.entries<Json>(document.paths)) {
      for (const [method, operation] of Object.entries<Json>(item)) {
        for (const [status, response] of Object.entries<Json>(operation.responses)) {
          const examples = response.content?.['application/json']?.examples ?? {};
          for (const [code, example] of Object.entries<Json>(examples)) {
            expect([path, method, code, Number(status)]).toEqual([
              path,
              method,
              code,
              ERROR_STATUS[code as keyof typeof ERROR_STATUS],
            ]);
            expect(example.value.error).toBe(code);
          }
        }
      }
    }
    // A procedure's meta declares its own codes; the document adds those of every route.
    const readApp = document.paths['/admin/apps/{appId}'].get.responses;
    const codes = Object.values<Json>(readApp).flatMap((response) =>
      Object.keys(response.content?.['application/json']?.examples ?? {}),
    );
    expect(codes).toEqual([
      'invalid_request',
      'invalid_api_key',
      'rbac_denied',
      'app_not_found',
      'method_not_allowed',
      'internal_error',
    ]);
  });

  it('groups agent, oauth, admin and operational paths, with bearer auth', () => {
    expect(document.tags.map((tag: { name: string }) => tag.name)).toEqual([
      'agent',
      'oauth',
      'admin',
      'operations',
    ]);
    expect(document.components.securitySchemes.Authorization).toMatchObject({
      type: 'http',
      scheme: 'bearer',
    });
    // The client id is a scheme of its own, so Swagger UI's Authorize takes it once for every call.
    expect(document.components.securitySchemes.ClientId).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'X-Service-Client-Id',
    });
    for (const [path, method] of [
      ['/tools', 'get'],
      ['/proxyV2', 'post'],
      ['/initiateOAuth', 'post'],
      ['/connections', 'get'],
      ['/connections/{appId}', 'delete'],
    ]) {
      const operation = document.paths[path as string][method as string];
      expect(operation.security, path).toEqual([{ Authorization: [], ClientId: [] }]);
      const headers = (operation.parameters ?? []).map((p: Json) => p.name.toLowerCase());
      expect(headers, path).not.toContain('x-service-client-id');
    }
    expect(document.paths['/admin/clients'].get.security).toEqual([{ Authorization: [] }]);
    expect(document.paths['/tools'].get.tags).toEqual(['agent']);
    expect(document.paths['/admin/clients/{clientId}/api-keys'].get.tags).toEqual(['admin']);
    expect(document.paths['/mcp'].post.tags).toEqual(['operations']);
    expect(document.paths['/metrics'].get.tags).toEqual(['operations']);
  });
});

describe('/docs', () => {
  it('loads its files from this server, never elsewhere, and / leads to it', async () => {
    const page = await call(server.url, 'GET', '/docs');
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'; script-src 'self'");
    for (const asset of ['swagger-ui-bundle.js', 'swagger-ui.css', 'init.js', 'favicon-32x32.png']) {
      expect(page.text).toContain(`docs/assets/${asset}`);
      const reply = await call(server.url, 'GET', `/docs/assets/${asset}`);
      expect(reply.status, asset).toBe(200);
    }
    expect(page.text).not.toMatch(/https?:\/\//);
    for (const name of ['index.html', '..%2Fpackage.json', 'swagger-ui.js']) {
      const missing = await call(server.url, 'GET', `/docs/assets/${name}`);
      expect([missing.status, missing.body]).toEqual([
        404,
        { ok: false, error: 'not_found', message: 'No such path.' },
      ]);
    }
    const root = await fetch(`${server.url}/`, { redirect: 'manual' });
    expect([root.status, root.headers.get('location')]).toEqual([302, '/docs']);
  });

  describe.skipIf(!existsSync(CHROMIUM))('in headless Chromium', () => {
    let browser: Browser;
    beforeAll(async () => {
      browser = await chromium.launch({
        executablePath: CHROMIUM,
        args: [
          '--headless',
          '--no-sandbox',
          '--disable-gpu',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
          '--no-first-run',
        ],
      });
    });
    afterAll(async () => browser?.close());

    it('renders every operation, grouped, with bearer auth, no console error and no request elsewhere', async () => {
      const page = await browser.newPage();
      const problems: string[] = [];
      const foreign: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });
      page.on('pageerror', (error) => problems.push(error.message));
      page.on('request', (request) => {
        if (!request.url().startsWith(server.url) && !request.url().startsWith('data:'))
          foreign.push(request.url());
      });
      await page.goto(`${server.url}/`);
      await page.locator('.opblock-tag-section').first().waitFor();
      await page.locator('.opblock-summary-path').first().waitFor();

      const tags = await page
        .locator('.opblock-tag')
        .evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-tag')));
      expect(tags).toEqual(['agent', 'oauth', 'admin', 'operations']);
      const paths = await page
        .locator('.opblock-summary-path')
        .evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-path')));
      expect(paths).toEqual(expect.arrayContaining(['/proxyV2', '/tools', '/admin/apps/{appId}', '/mcp']));
      expect(await page.locator('.auth-wrapper .authorize').count()).toBe(1);

      // An operation opens with its error statuses and their example bodies.
      await page.locator('#operations-agent-proxy').locator('.opblock-summary').click();
      const statuses = await page
        .locator('#operations-agent-proxy .responses-table .response-col_status')
        .allInnerTexts();
      expect(statuses.map((s) => s.trim())).toEqual(
        expect.arrayContaining(['401', '409', '429', '502', '504']),
      );
      expect(problems).toEqual([]);
      expect(foreign).toEqual([]);
      await page.close();
    });

    it('Authorize takes the API key and the client id, and "Try it out" lists the tools with them', async () => {
      const page = await browser.newPage();
      await page.goto(`${server.url}/docs`);
      await page.locator('.auth-wrapper .authorize').click();
      const dialog = page.locator('.dialog-ux .modal-ux');
      const bearer = dialog.locator('.auth-container').filter({ hasText: 'Authorization' });
      const clientId = dialog.locator('.auth-container').filter({ hasText: 'X-Service-Client-Id' });
      await bearer.locator('input').fill(agent.apiKey);
      await bearer.locator('button.authorize').click();
      await clientId.locator('input').fill(agent.clientId);
      await clientId.locator('button.authorize').click();
      // Each scheme, once applied, offers to remove it instead.
      expect(await dialog.getByRole('button', { name: 'Remove authorization' }).count()).toBe(2);
      await dialog.locator('button.close-modal').click();

      const tools = page.locator('#operations-agent-tools-list');
      await tools.locator('.opblock-summary').click();
      await tools.locator('.try-out__btn').click();
      await tools.locator('button.execute').click();
      const answer = tools.locator('.live-responses-table .response .response-col_status').first();
      await answer.waitFor();
      // The server the page came from, not PUBLIC_URL (here http://127.0.0.1:0, the port chosen at start).
      expect(await tools.locator('.request-url pre').innerText()).toBe(`${server.url}/tools`);
      expect((await answer.innerText()).trim()).toBe('200');
      const body = JSON.parse(await tools.locator('.live-responses-table .microlight').first().innerText());
      expect(body.tools.map((tool: Json) => tool.toolId)).toEqual([
        'pets:::listPets',
        'pets:::addPet',
        'pets:::getPetById',
      ]);
      await page.close();
    });
  });
});

if (!existsSync(CHROMIUM)) {
  console.warn(`\n*** /docs browser test SKIPPED: ${CHROMIUM} is missing (apt-get install chromium) ***\n`);
}
