import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCOPE } from '../../server/auth/scopes.ts';
import { KEY_SCOPES } from '../../server/console/app/scopes.ts';
import { type Harness, redirectQuery, startHarness } from '../oauth/harness.ts';
import { call } from '../support/server.ts';
import {
  CHROMIUM,
  HAS_CHROMIUM,
  launch,
  screenshot,
  signIn,
  storageText,
  type Watched,
  watchedPage,
} from './browser.ts';

/**
 * The console's clients and connections pages in a real browser, on a server with a real OAuth
 * provider: a client created, a redirect URI added, an API key created (shown once, working at
 * once) and revoked (refused by the server); an end user's grant, made by a real OAuth flow, seen
 * user by user and disconnected.
 */

describe.skipIf(!HAS_CHROMIUM)('web console: clients, keys and connections in headless Chromium', () => {
  let h: Harness;
  let browser: Browser;
  let tab: Watched;
  beforeAll(async () => {
    [h, browser] = await Promise.all([startHarness('pglite'), launch()]);
    expect(redirectQuery(await h.connect('ada@example.com')).get('status')).toBe('success');
    tab = await watchedPage(browser, h.server.url);
    await signIn(tab.page, h.server.url, h.server.adminKey);
  });
  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it('offers every scope the server knows', () => {
    expect([...KEY_SCOPES].sort()).toEqual(Object.values(SCOPE).sort());
  });

  it('creates a client, adds a redirect URI, and creates an API key shown once that works at once', async () => {
    const { page } = tab;
    await page.getByRole('link', { name: 'Clients', exact: true }).click();
    await page.getByLabel('Name').fill('console agent');
    await page.getByRole('button', { name: 'Create client' }).click();
    await page.getByRole('link', { name: 'console agent' }).click();
    await page.getByRole('heading', { name: 'Client console agent' }).waitFor();
    const clientId = (await page.locator('dl.facts dd.mono').textContent()) as string;
    expect(clientId).toMatch(/^cli_/);

    await page.getByLabel('New redirect URI').fill('https://agent.example/oauth/done');
    await page.getByRole('button', { name: 'Add' }).click();
    await page.getByText('https://agent.example/oauth/done').waitFor();
    const uris = await call(h.server.url, 'GET', `/admin/clients/${clientId}/redirect-uris`, {
      key: h.server.adminKey,
    });
    expect(uris.body).toEqual({ uris: ['https://agent.example/oauth/done'] });

    await page.getByLabel("New key's name (optional)").fill('prod');
    await page.getByRole('checkbox', { name: 'tools:execute:demo' }).check();
    await page.getByRole('checkbox', { name: 'tools:execute', exact: true }).uncheck();
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByTestId('new-api-key');
    await shown.waitFor();
    const apiKey = (await shown.textContent()) as string;
    expect(apiKey).toMatch(/^tg_key_/);
    await screenshot(page, '10-client-key-created');
    // The key works at once, for the app it was given.
    const tools = await call(h.server.url, 'GET', '/tools', { key: apiKey, clientId });
    expect([tools.status, tools.body.tools.map((tool: { appId: string }) => tool.appId)[0]]).toEqual([
      200,
      'demo',
    ]);
    // Shown once: gone from the page when done, never kept by the page.
    expect(await storageText(tab.page)).not.toContain(apiKey);
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.content()).not.toContain(apiKey);
    const row = page.getByRole('row', { name: /prod/ });
    expect(await row.getByRole('cell').first().textContent()).toBe('tools:execute:demo');

    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByText('revoked').waitFor();
    const refused = await call(h.server.url, 'GET', '/tools', { key: apiKey, clientId });
    expect([refused.status, refused.body.error]).toEqual([401, 'invalid_api_key']);
    await screenshot(page, '11-client-key-revoked');
  });

  it('lists connections user by user and disconnects one', async () => {
    const { page } = tab;
    await page.getByRole('link', { name: 'Connections', exact: true }).click();
    const group = page.getByRole('columnheader', { name: /User ada@example\.com/ });
    await group.waitFor();
    const row = page.getByRole('row', { name: /demo/ });
    expect(await row.getByRole('cell').allTextContents()).toEqual([
      'active',
      'profile:read',
      expect.any(String),
      expect.any(String),
      'Disconnect',
    ]);
    await screenshot(page, '12-connections');
    await row.getByRole('button', { name: 'Disconnect' }).click();
    await page.getByText('No connection yet.').waitFor();
    expect((await h.connections('ada@example.com')).body).toEqual({ connections: [] });
  });

  it('did it all under the CSP, with no console error and no request elsewhere', () => {
    expect(tab.problems).toEqual([]);
    expect(tab.foreign).toEqual([]);
  });
});

if (!HAS_CHROMIUM) {
  console.warn(
    `\n*** web console browser test SKIPPED: ${CHROMIUM} is missing (apt-get install chromium) ***\n`,
  );
}
