import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, redirectQuery, startHarness } from '../oauth/harness.ts';
import { startServer, type TestServer } from '../support/server.ts';
import {
  axeViolations,
  formatViolation,
  overflow,
  type TabWalk,
  tabTo,
  tabToNamed,
  tabWalk,
  type Violation,
} from './a11y.ts';
import { CHROMIUM, HAS_CHROMIUM, launch, screenshot, type Watched, watchedPage } from './browser.ts';

/**
 * The console's accessibility, checked by a machine: every page, empty and with data, at 1280 px
 * and at a phone's 390 px, run through axe-core's WCAG 2.1 A/AA rules and best practices, and
 * checked for sideways scrolling; then the same pages worked from the keyboard alone — every
 * control reached by Tab with a visible focus, and signing in, the navigation, registering an app
 * from its file, creating a client and a key, revoking it, disconnecting and verifying the audit
 * chain done with Enter and Space. Screenshots: test-artifacts/console/a11y-*.png.
 */

const PETS_FILE = fileURLToPath(new URL('../../examples/pets.openapi.json', import.meta.url));
const WIDTHS = [
  { width: 1280, height: 800 },
  { width: 390, height: 844 },
] as const;

/** What went wrong at one width of one world: axe's violations, sideways scrolling, console errors. */
interface Findings {
  /** '' in the light scheme, ' (dark)' in the dark one: said after each page's name. */
  scheme: string;
  violations: Violation[];
  overflowing: string[];
  problems: string[];
}

/** Waits for the page's heading and for every "Loading …" to be gone. */
async function settled(page: Page, heading: string | RegExp): Promise<void> {
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  await expect.poll(() => page.getByText(/^Loading .*…$/).count()).toBe(0);
}

/** One page as it stands: axe, the width it takes, a screenshot. */
async function check(page: Page, name: string, findings: Findings, shot: string): Promise<void> {
  const named = `${name}${findings.scheme}`;
  findings.violations.push(...(await axeViolations(page, named)));
  const wider = await overflow(page);
  const width = page.viewportSize()?.width;
  if (wider.by > 0)
    findings.overflowing.push(
      `${named} at ${width} px is ${wider.by} px too wide: ${wider.culprits.join(', ')}`,
    );
  await screenshot(page, `a11y-${shot}-${width}${findings.scheme ? '-dark' : ''}`);
}

function report(findings: Findings): string[] {
  return [
    ...findings.violations.map(formatViolation),
    ...findings.overflowing,
    ...findings.problems.map((p) => `console error: ${p}`),
  ];
}

async function openAt(browser: Browser, url: string, viewport: (typeof WIDTHS)[number]): Promise<Watched> {
  const tab = await watchedPage(browser, url, { ...viewport });
  await tab.page.goto(`${url}/console`);
  await tab.page.getByLabel('Admin key').waitFor();
  return tab;
}

async function signInWith(page: Page, key: string): Promise<void> {
  await page.getByLabel('Admin key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

describe.skipIf(!HAS_CHROMIUM)(
  'web console accessibility (axe-core, keyboard, widths) in headless Chromium',
  () => {
    let browser: Browser;
    let empty: TestServer;
    let h: Harness;
    beforeAll(async () => {
      [browser, empty, h] = await Promise.all([launch(), startServer('pglite'), startHarness('pglite')]);
      // The world with data: a connection, a call that worked and one that failed, in the log.
      expect(redirectQuery(await h.connect('ada@example.com')).get('status')).toBe('success');
      expect((await h.proxy('ada@example.com')).status).toBe(200);
      expect((await h.proxy('bob@example.com')).body.error).toBe('auth_required');
      await h.server.app.deps.callLog.flush();
    });
    afterAll(async () => {
      await browser?.close();
      await empty?.close();
      await h?.close();
    });

    for (const viewport of WIDTHS) {
      it(`has no violation on any page of an empty console at ${viewport.width} px`, async () => {
        const tab = await openAt(browser, empty.url, viewport);
        const { page } = tab;
        const findings: Findings = { scheme: '', violations: [], overflowing: [], problems: tab.problems };
        await check(page, 'sign-in', findings, 'sign-in');
        await page.getByLabel('Admin key').fill('tg_this-is-not-a-key');
        await page.getByRole('button', { name: 'Sign in' }).click();
        await page.getByRole('alert').waitFor();
        await check(page, 'sign-in, wrong key', findings, 'sign-in-wrong-key');
        await signInWith(page, empty.adminKey);

        await settled(page, 'Overview');
        await page.getByText('No tool call in the last hour.').waitFor();
        await check(page, 'overview (empty)', findings, 'empty-overview');
        await page.goto(`${empty.url}/console/apps`);
        await settled(page, 'Apps');
        await page.getByText('No app is registered yet.', { exact: false }).waitFor();
        await page.getByRole('button', { name: 'Register an app' }).click();
        await page.getByLabel('OpenAPI or Swagger 2.0 file (JSON or YAML)').waitFor();
        await check(page, 'apps (empty, register form open)', findings, 'empty-apps');
        for (const [path, heading, none] of [
          ['clients', 'Clients', 'No client yet.'],
          ['connections', 'Connections', 'No connection yet.'],
          ['calls', 'Call log', 'No call yet.'],
        ] as const) {
          await page.goto(`${empty.url}/console/${path}`);
          await settled(page, heading);
          await page.getByText(none, { exact: false }).waitFor();
          await check(page, `${path} (empty)`, findings, `empty-${path}`);
        }
        await page.goto(`${empty.url}/console/audit`);
        await settled(page, 'Audit trail');
        await check(page, 'audit (empty)', findings, 'empty-audit');
        await tab.context.close();
        expect(report(findings)).toEqual([]);
      });
    }

    // And a phone in the dark scheme (the stylesheet's other palette).
    const views = [...WIDTHS.map((v) => ({ ...v, dark: false })), { ...WIDTHS[1], dark: true }];
    for (const { dark, ...viewport } of views) {
      it(`has no violation on any page of a console with data at ${viewport.width} px${dark ? ', dark' : ''}`, async () => {
        const tab = await openAt(browser, h.server.url, viewport);
        const { page } = tab;
        if (dark) await page.emulateMedia({ colorScheme: 'dark' });
        const findings: Findings = {
          scheme: dark ? ' (dark)' : '',
          violations: [],
          overflowing: [],
          problems: tab.problems,
        };
        await signInWith(page, h.server.adminKey);

        await settled(page, 'Overview');
        await expect.poll(() => page.getByTestId('total-calls').textContent()).toBe('2');
        await page.locator('figure.chart').waitFor();
        await check(page, 'overview', findings, 'data-overview');

        await page.goto(`${h.server.url}/console/apps`);
        await settled(page, 'Apps');
        await page.getByRole('rowheader', { name: 'demo' }).waitFor();
        await check(page, 'apps', findings, 'data-apps');

        await page.goto(`${h.server.url}/console/apps/demo`);
        await settled(page, 'App demo');
        await page.getByLabel('Find a tool by describing the task').fill('who am I');
        await page.getByRole('button', { name: 'Search' }).click();
        await page.locator('.score').first().waitFor();
        await page.locator('.tool summary').first().click();
        await page.locator('pre.schema').first().waitFor();
        await check(page, "app's tools, searched", findings, 'data-app-tools');

        await page.goto(`${h.server.url}/console/clients`);
        await settled(page, 'Clients');
        await page.getByRole('rowheader').first().waitFor();
        await check(page, 'clients', findings, 'data-clients');
        await page.getByRole('rowheader').first().getByRole('link').click();
        await settled(page, /^Client /);
        await page.getByRole('button', { name: 'Create key' }).click();
        await page.getByTestId('new-api-key').waitFor();
        await page.getByRole('row').nth(1).waitFor();
        await check(page, 'client, a new key shown once', findings, 'data-client-key');
        await page.getByRole('button', { name: 'Done' }).click();

        await page.goto(`${h.server.url}/console/connections`);
        await settled(page, 'Connections');
        await page.getByRole('row', { name: /demo/ }).waitFor();
        await check(page, 'connections', findings, 'data-connections');

        await page.goto(`${h.server.url}/console/calls`);
        await settled(page, 'Call log');
        await expect.poll(() => page.locator('table.calls tbody tr').count()).toBe(2);
        await check(page, 'call log', findings, 'data-calls');

        await page.goto(`${h.server.url}/console/audit`);
        await settled(page, 'Audit trail');
        await page.getByRole('button', { name: 'Verify the chain' }).click();
        await page.locator('.verdict').waitFor();
        await check(page, 'audit, chain verified', findings, 'data-audit');
        await tab.context.close();
        expect(report(findings)).toEqual([]);
      });
    }

    it('works from the keyboard alone: every control reached by Tab with a visible focus, each used by Enter or Space', async () => {
      const tab = await openAt(browser, h.server.url, WIDTHS[0]);
      const { page } = tab;
      const walks: Record<string, TabWalk> = {};
      const walk = async (name: string) => {
        walks[name] = await tabWalk(page);
      };
      const press = async (name: string, key: 'Enter' | 'Space') => {
        await tabToNamed(page, name);
        await page.keyboard.press(key);
      };

      await walk('sign-in');
      await tabToNamed(page, '#admin-key');
      await page.keyboard.type(h.server.adminKey);
      await press('Sign in', 'Space');
      await settled(page, 'Overview');
      await walk('overview');

      // The navigation, then registering an app from its file: the file input opens its chooser on Space.
      await press('Apps', 'Enter');
      await settled(page, 'Apps');
      await press('Register an app', 'Enter');
      const chooser = page.waitForEvent('filechooser');
      await press('#app-file', 'Space');
      await (await chooser).setFiles(PETS_FILE);
      await tabToNamed(page, '#app-id');
      await page.keyboard.press('ControlOrMeta+A');
      await page.keyboard.type('pets');
      await page.keyboard.press('Tab');
      await page.keyboard.type('example.pets');
      await walk('apps, register form open');
      await press('Register', 'Enter');
      await page.getByText('Registered pets: 3 tools, nothing skipped.').waitFor();
      await press('pets', 'Enter');
      await settled(page, 'App pets');
      await tabToNamed(page, '#tool-search');
      await page.keyboard.type('find one pet by its id');
      await page.keyboard.press('Enter');
      await page.locator('.score').first().waitFor();
      await tabTo(page, (focused) => focused.tag === 'summary', 'the first tool');
      await page.keyboard.press('Enter');
      await page.locator('pre.schema').first().waitFor();
      await walk("app's tools");

      // A client, a key for it (shown once), and revoking it.
      await press('Clients', 'Enter');
      await settled(page, 'Clients');
      await page.getByRole('rowheader').first().waitFor();
      await walk('clients');
      await tabToNamed(page, '#client-name');
      await page.keyboard.type('keyboard agent');
      await page.keyboard.press('Enter');
      await press('keyboard agent', 'Enter');
      await settled(page, 'Client keyboard agent');
      await tabToNamed(page, '#key-name');
      await page.keyboard.type('typed');
      await press('Create key', 'Space');
      await page.getByTestId('new-api-key').waitFor();
      await walk('client, a new key shown once');
      await press('Done', 'Enter');
      await page.getByTestId('new-api-key').waitFor({ state: 'detached' });
      await press('Revoke', 'Enter');
      await page.getByRole('row', { name: /typed/ }).getByText('revoked').waitFor();

      await press('Connections', 'Enter');
      await settled(page, 'Connections');
      await page.getByRole('row', { name: /demo/ }).waitFor();
      await walk('connections');
      await press('Disconnect', 'Enter');
      await page.getByText('No connection yet.').waitFor();

      await press('Call log', 'Enter');
      await settled(page, 'Call log');
      await walk('call log');
      await press('Audit', 'Enter');
      await settled(page, 'Audit trail');
      await walk('audit');
      await press('Verify the chain', 'Space');
      await page.locator('.verdict').waitFor();

      const failures = Object.entries(walks).flatMap(([name, w]) => [
        ...w.unreached.map((control) => `${name}: Tab never reaches ${control}`),
        ...w.invisible.map((control) => `${name}: no visible focus on ${control}`),
      ]);
      expect(failures).toEqual([]);
      // Each walk reached something (the check cannot pass by reaching nothing).
      expect(Object.values(walks).every((w) => w.reached > 1)).toBe(true);
      expect([...tab.problems, ...tab.foreign]).toEqual([]);
      await tab.context.close();
    });
  },
);

if (!HAS_CHROMIUM) {
  console.warn(
    `\n*** web console accessibility test SKIPPED: ${CHROMIUM} is missing (apt-get install chromium) ***\n`,
  );
}
