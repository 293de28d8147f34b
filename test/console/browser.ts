/**
 * Headless Chromium (Debian's package, driven by playwright-core) for the web console's tests: one
 * browser, pages that record every console error, page error, refused CSP and request to another
 * origin, and screenshots kept as test artefacts in test-artifacts/console/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
export const HAS_CHROMIUM = existsSync(CHROMIUM);
export const SCREENSHOTS = fileURLToPath(new URL('../../test-artifacts/console/', import.meta.url));

/** `args`: Chromium switches besides (e.g. `--host-resolver-rules` to give a page another origin). */
export function launch(args: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      ...args,
    ],
  });
}

/** A page and what went wrong on it: console errors, page errors, requests to another origin. */
export interface Watched {
  context: BrowserContext;
  page: Page;
  problems: string[];
  foreign: string[];
}

export async function watchedPage(
  browser: Browser,
  baseUrl: string,
  viewport = { width: 1280, height: 900 },
): Promise<Watched> {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const problems: string[] = [];
  const foreign: string[] = [];
  page.on('console', (message) => {
    // Chromium logs every 4xx; the session's own 401/403 (signed out, a wrong key) is the page's
    // business and shown by it. Any other error counts.
    const sessionAnswer = message.location().url.endsWith('/console/session');
    if (message.type() === 'error' && !sessionAnswer)
      problems.push(`${message.text()} ${new URL(message.location().url || 'about:blank').pathname}`);
  });
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(baseUrl) && !url.startsWith('data:')) foreign.push(url);
  });
  // window.confirm() before a deletion or revocation: the person says yes.
  page.on('dialog', (dialog) => void dialog.accept());
  return { context, page, problems, foreign };
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: `${SCREENSHOTS}${name}.png`, fullPage: true });
}

/** Everything the page could keep a key in, as text: both storages and the cookies script can read. */
export function storageText(page: Page): Promise<string> {
  // A string, evaluated in the page: the tests are compiled without the DOM's types.
  return page.evaluate(`(() => {
    const dump = (storage) =>
      Array.from({ length: storage.length }, (_, i) => storage.key(i) + '=' + storage.getItem(storage.key(i))).join('\\n');
    return [dump(localStorage), dump(sessionStorage), document.cookie].join('\\n');
  })()`);
}

export async function signIn(page: Page, baseUrl: string, key: string): Promise<void> {
  await page.goto(`${baseUrl}/console`);
  await page.getByLabel('Admin key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}
