import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Agent, provisionAgent } from '../support/agent.ts';
import { type PetsExample, startPetsExample } from '../support/pets-example.ts';
import { call, startServer, type TestServer } from '../support/server.ts';
import {
  CHROMIUM,
  HAS_CHROMIUM,
  launch,
  SCREENSHOTS,
  screenshot,
  signIn,
  storageText,
  type Watched,
  watchedPage,
} from './browser.ts';

/**
 * The web console in a real browser against a real server: sign-in (and a wrong key's message),
 * registering the example app from its file, browsing and searching its tools, the key never kept
 * by the page, the CSP holding with no console error and no request elsewhere, a phone's width,
 * and the session ending when its key is revoked. Screenshots: test-artifacts/console/.
 */

const PETS_FILE = fileURLToPath(new URL('../../examples/pets.openapi.json', import.meta.url));

describe.skipIf(!HAS_CHROMIUM)('web console in headless Chromium', () => {
  let server: TestServer;
  let pets: PetsExample;
  let browser: Browser;
  let admin: Agent;
  let tab: Watched;
  beforeAll(async () => {
    [server, pets, browser] = await Promise.all([startServer('pglite'), startPetsExample(), launch()]);
    // An admin key of its own (not TOOLGATE_ADMIN_KEY), so that revoking it can end the session.
    admin = await provisionAgent(server, ['admin'], { name: 'operator' });
    tab = await watchedPage(browser, server.url);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await pets?.close();
  });

  it('refuses a wrong key with a clear message, and a key without admin with another', async () => {
    const { page } = tab;
    await page.goto(`${server.url}/console`);
    await page.getByLabel('Admin key').fill('tg_this-is-not-a-key');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toBe('That key was not accepted: it is unknown, mistyped or revoked.');
    // The field is emptied whatever the answer.
    expect(await page.getByLabel('Admin key').inputValue()).toBe('');
    await screenshot(page, '01-sign-in-wrong-key');

    const agent = await provisionAgent(server, ['tools:execute']);
    await page.getByLabel('Admin key').fill(agent.apiKey);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toBe('That key is valid but lacks the admin scope: the console needs an admin key.');
  });

  it('signs in with an admin key that the page never keeps: only an HttpOnly cookie', async () => {
    const { page, context } = tab;
    await signIn(page, server.url, admin.apiKey);
    await page.getByRole('heading', { name: 'Apps' }).waitFor();
    expect(page.url()).toBe(`${server.url}/console/apps`);
    const stored = await storageText(page);
    expect(stored).not.toContain(admin.apiKey);
    expect(stored.trim()).toBe(''); // nothing in either storage; the cookie is invisible to script
    const cookies = await context.cookies();
    expect(cookies.map(({ name, httpOnly, sameSite, path }) => ({ name, httpOnly, sameSite, path }))).toEqual(
      [{ name: 'toolgate_console', httpOnly: true, sameSite: 'Strict', path: '/' }],
    );
    expect(await page.getByText('No app is registered yet.').isVisible()).toBe(true);
  });

  it('registers the example app from its OpenAPI file, showing progress, then lists it', async () => {
    const { page } = tab;
    await page.getByRole('button', { name: 'Register an app' }).click();
    await page.getByLabel('OpenAPI or Swagger 2.0 file (JSON or YAML)').setInputFiles(PETS_FILE);
    // The app id is proposed from the file name; the example's is "pets".
    expect(await page.getByLabel('App id').inputValue()).toBe('pets.openapi');
    await page.getByLabel('App id').fill('pets');
    await page.getByLabel('Provider').fill('example.pets');
    await page.getByLabel('Base URL (optional)').fill(pets.url);
    await page.getByRole('button', { name: 'Register', exact: true }).click();
    const done = page.locator('.note.success');
    await done.waitFor();
    expect((await done.textContent())?.trim()).toBe('Registered pets: 3 tools, nothing skipped.');
    await screenshot(page, '02-app-registered');

    const row = page.getByRole('row', { name: /pets/ });
    await row.waitFor();
    expect(await row.getByRole('cell').allTextContents()).toEqual([
      'example.pets',
      pets.url,
      'none',
      '3',
      '0',
      expect.any(String),
    ]);
    // The server has it as the console said.
    const app = await call(server.url, 'GET', '/admin/apps/pets', { key: server.adminKey });
    expect([app.status, app.body.tools, app.body.baseUrl]).toEqual([
      200,
      ['listPets', 'addPet', 'getPetById'],
      pets.url,
    ]);
  });

  it('browses the app and finds its tools by describing a task (the ranked search)', async () => {
    const { page } = tab;
    await page.getByRole('rowheader', { name: 'pets' }).getByRole('link').click();
    await page.getByRole('heading', { name: 'Tools (3)' }).waitFor();
    const names = () => page.locator('.tool-name').allTextContents();
    expect(await names()).toEqual(['listPets', 'addPet', 'getPetById']);
    await page.getByLabel('Find a tool by describing the task').fill('find one pet by its id');
    await page.getByRole('button', { name: 'Search' }).click();
    await expect.poll(async () => (await names())[0]).toBe('getPetById');
    expect(await page.locator('.score').first().textContent()).toMatch(/^0\.\d\d$|^1\.00$/);
    await page.locator('.tool summary').first().click();
    expect(await page.locator('pre.schema').first().textContent()).toContain('"petId"');
    expect(await page.getByText('Every operation of the document became a tool.').isVisible()).toBe(true);
    await screenshot(page, '03-app-tools-search');
  });

  it('fits a phone: no sideways scrolling, every page reachable', async () => {
    const phone = await watchedPage(browser, server.url, { width: 390, height: 844 });
    await phone.context.addCookies(await tab.context.cookies());
    await phone.page.goto(`${server.url}/console/apps/pets`);
    await phone.page.getByRole('heading', { name: 'Tools (3)' }).waitFor();
    const overflow = await phone.page.evaluate(
      'document.documentElement.scrollWidth - document.documentElement.clientWidth',
    );
    expect(overflow).toBe(0);
    expect(await phone.page.getByRole('navigation', { name: 'Console' }).isVisible()).toBe(true);
    await screenshot(phone.page, '04-phone-app');
    expect([...phone.problems, ...phone.foreign]).toEqual([]);
    await phone.context.close();
  });

  it('ran under the CSP with no console error and no request to another origin', async () => {
    const page = await call(server.url, 'GET', '/console');
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(tab.problems).toEqual([]);
    expect(tab.foreign).toEqual([]);
    expect(SCREENSHOTS).toContain('test-artifacts');
  });
  it('ends the session in the browser when its key is revoked', async () => {
    const { page } = tab;
    const revoked = await call(server.url, 'DELETE', `/admin/api-keys/${admin.keyId}`, {
      key: server.adminKey,
    });
    expect(revoked.status).toBe(200);
    // The next thing the page asks of the server (here: the list of apps) learns it.
    expect(new URL(page.url()).pathname).toBe('/console/apps/pets');
    await page.getByRole('link', { name: 'Apps', exact: true }).click();
    await page.getByRole('status').filter({ hasText: 'Your session ended' }).waitFor();
    expect(await page.getByLabel('Admin key').isVisible()).toBe(true);
    await screenshot(page, '05-session-ended');
    // The one error the browser logged is the refused request that told the page.
    expect(tab.problems).toEqual([
      'Failed to load resource: the server responded with a status of 401 (Unauthorized) /admin/apps',
    ]);
  });
});

if (!HAS_CHROMIUM) {
  console.warn(
    `\n*** web console browser test SKIPPED: ${CHROMIUM} is missing (apt-get install chromium) ***\n`,
  );
}
