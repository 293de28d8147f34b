import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Toolgate } from '../../sdk/src/index.ts';
import { type Agent, provisionAgent, registerApp } from '../support/agent.ts';
import { type PetsExample, petsRegistration, startPetsExample } from '../support/pets-example.ts';
import { call, startServer, type TestServer } from '../support/server.ts';
import { CHROMIUM, HAS_CHROMIUM, launch, screenshot, signIn, type Watched, watchedPage } from './browser.ts';

/**
 * The story in a real browser, on the console's pages over the call log and the audit
 * trail: a client and a key created in the console, tool calls made with the SDK (one fails), the
 * calls seen in the call log and on the overview (chart, p50/p99, top errors), the key revoked in
 * the console, the revocation seen in the audit trail with who did it, and the chain verified.
 */

describe.skipIf(!HAS_CHROMIUM)('web console: overview, call log and audit trail in headless Chromium', () => {
  let server: TestServer;
  let pets: PetsExample;
  let browser: Browser;
  let operator: Agent;
  let tab: Watched;
  let agent: { clientId: string; apiKey: string };
  beforeAll(async () => {
    [server, pets, browser] = await Promise.all([startServer('pglite'), startPetsExample(), launch()]);
    await registerApp(server, 'pets', petsRegistration(pets));
    operator = await provisionAgent(server, ['admin'], { name: 'operator' });
    tab = await watchedPage(browser, server.url);
    await signIn(tab.page, server.url, operator.apiKey);
  });
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await pets?.close();
  });

  it('creates a client and a key in the console; the SDK calls tools with it', async () => {
    const { page } = tab;
    await page.getByRole('link', { name: 'Clients', exact: true }).click();
    await page.getByLabel('Name').fill('story agent');
    await page.getByRole('button', { name: 'Create client' }).click();
    await page.getByRole('link', { name: 'story agent' }).click();
    await page.getByRole('heading', { name: 'Client story agent' }).waitFor();
    const clientId = (await page.locator('dl.facts dd.mono').textContent()) as string;
    await page.getByLabel("New key's name (optional)").fill('story');
    await page.getByRole('button', { name: 'Create key' }).click();
    const apiKey = (await page.getByTestId('new-api-key').textContent()) as string;
    await page.getByRole('button', { name: 'Done' }).click();
    agent = { clientId, apiKey };

    const toolgate = new Toolgate({ baseUrl: server.url, apiKey, clientId });
    const ok = await toolgate.execute('pets:::getPetById', { petId: 1 });
    expect(ok.ok).toBe(true);
    const refused = await toolgate.execute('pets:::getPetById', { petId: 'one' });
    expect(refused.ok).toBe(false);
  });

  it('shows the calls in the call log, newest first, filtered by outcome', async () => {
    const { page } = tab;
    await page.getByRole('link', { name: 'Call log', exact: true }).click();
    const rows = page.locator('table.calls tbody tr');
    // The log is written in batches off the call's path: auto-refresh brings the calls in.
    await page.getByRole('checkbox', { name: /Auto-refresh/ }).check();
    await expect.poll(() => rows.count(), { timeout: 20_000 }).toBe(2);
    const outcomes = await page.locator('table.calls tbody tr .chip').allTextContents();
    expect(outcomes).toEqual(['invalid_parameters', 'ok']);
    expect(await rows.first().locator('th').textContent()).toBe('pets:::getPetById');
    expect(await rows.first().textContent()).toContain(agent.clientId);
    await screenshot(page, '20-call-log');

    await page.getByLabel('Outcome (ok or an error code)').fill('ok');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => page.locator('table.calls tbody tr .chip').allTextContents()).toEqual(['ok']);
  });

  it('draws the overview: calls per minute by outcome, p50/p99, top errors', async () => {
    const { page } = tab;
    await page.getByRole('link', { name: 'Overview', exact: true }).click();
    await expect.poll(() => page.getByTestId('total-calls').textContent()).toBe('2');
    expect(await page.getByTestId('failed-calls').textContent()).toBe('1 (50.0 %)');
    expect(await page.getByTestId('p50').textContent()).toMatch(/^\d+ ms$/);
    expect(await page.getByTestId('p99').textContent()).toMatch(/^\d+ ms$/);
    const bars = await page
      .locator('figure.chart rect.bar')
      .evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-outcome')));
    expect(bars.sort()).toEqual(['invalid_parameters', 'ok']);
    expect(await page.locator('ul.legend li').allTextContents()).toEqual([' ok', ' invalid_parameters']);
    const topError = page.locator('table.top-errors tbody tr');
    expect(await topError.allTextContents()).toEqual(['invalid_parameters1see the calls']);
    await screenshot(page, '21-overview');
    await topError.getByRole('link').click();
    await expect
      .poll(() => page.locator('table.calls tbody tr .chip').allTextContents())
      .toEqual(['invalid_parameters']);
  });

  it('revokes the key in the console, and the audit trail says who did, with a verified chain', async () => {
    const { page } = tab;
    await page.getByRole('link', { name: 'Clients', exact: true }).click();
    await page.getByRole('link', { name: 'story agent' }).click();
    const row = page.getByRole('row', { name: /story/ });
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByText('revoked').waitFor();
    const refused = await call(server.url, 'GET', '/tools', { key: agent.apiKey, clientId: agent.clientId });
    expect(refused.status).toBe(401);

    await page.getByRole('link', { name: 'Audit', exact: true }).click();
    const first = page.locator('table.audit tbody tr').first();
    await first.waitFor();
    expect(await first.locator('th').textContent()).toBe('api_key.revoked');
    expect(await first.locator('td').nth(3).textContent()).toBe(operator.keyId);
    await page.getByLabel('Action').fill('client.created');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect
      .poll(() => page.locator('table.audit tbody tr th').allTextContents())
      .toEqual(['client.created', 'client.created']);
    await page.getByRole('button', { name: 'Verify the chain' }).click();
    const verdict = page.locator('.verdict');
    await verdict.waitFor();
    expect(await verdict.textContent()).toMatch(/^Verified: all \d+ events follow from one another\.$/);
    await screenshot(page, '22-audit-verified');
  });

  it('pages a filtered list 50 rows at a time, older and back (the pager the three lists share)', async () => {
    const { page } = tab;
    // 55 more clients: 57 client.created events with the two above, 50 on the first page.
    for (let i = 0; i < 55; i += 1) {
      const made = await call(server.url, 'POST', '/admin/clients', {
        key: server.adminKey,
        body: { name: `paged ${i}` },
      });
      expect(made.status).toBe(200);
    }
    const rows = page.locator('table.audit tbody tr');
    const newer = page.getByRole('button', { name: 'Newer' });
    const older = page.getByRole('button', { name: 'Older' });
    // Spaces around a value are dropped when the filter is applied.
    await page.getByLabel('Action').fill('  client.created ');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => rows.count()).toBe(50);
    expect(await newer.isDisabled()).toBe(true);
    const firstPage = await rows.locator('td').first().allTextContents();
    await older.click();
    await expect.poll(() => rows.count()).toBe(7);
    expect(await older.isDisabled()).toBe(true);
    expect(await rows.locator('th').allTextContents()).toEqual(Array(7).fill('client.created'));
    await newer.click();
    await expect.poll(() => rows.count()).toBe(50);
    expect(await rows.locator('td').first().allTextContents()).toEqual(firstPage);
    expect(await newer.isDisabled()).toBe(true);
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
