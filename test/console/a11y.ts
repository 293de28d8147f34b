/**
 * Machine checks of the console's accessibility, in the page: axe-core's WCAG 2.1 A/AA rules (and
 * its best practices: landmarks, heading order), sideways scrolling, and a walk with Tab over every
 * control that says which were never reached and which were reached without a visible focus.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';

/**
 * axe's own script. The console's CSP (script-src 'self') refuses an injected <script>; what the
 * browser's devtools protocol evaluates is not subject to it, so the engine is evaluated instead.
 */
const AXE_SOURCE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** WCAG 2.0 and 2.1, levels A and AA, and axe's best practices. */
export const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'];

export interface Violation {
  rule: string;
  impact: string;
  target: string;
  page: string;
  width: number;
  /** What axe says is wrong with that element. */
  why: string;
}

export function formatViolation(v: Violation): string {
  return `${v.rule} (${v.impact}) at ${v.target} on ${v.page} at ${v.width} px: ${v.why}`;
}

/** Every violation of the page as it stands, one per element. */
export async function axeViolations(page: Page, name: string): Promise<Violation[]> {
  if (!(await page.evaluate('typeof window.axe === "object"'))) await page.evaluate(AXE_SOURCE);
  const width = page.viewportSize()?.width ?? 0;
  const found = (await page.evaluate(`axe
    .run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(AXE_TAGS)} }, resultTypes: ['violations'] })
    .then((results) => results.violations.flatMap((rule) => rule.nodes.map((node) => ({
      rule: rule.id,
      impact: node.impact || rule.impact || 'unknown',
      target: node.target.join(' '),
      why: (node.failureSummary || rule.help).replace(/\\s+/g, ' ').trim(),
    }))))`)) as Omit<Violation, 'page' | 'width'>[];
  return found.map((v) => ({ ...v, page: name, width }));
}

/**
 * How far the page is wider than its viewport (0: no sideways scrolling), and the outermost
 * elements that stick out past its right edge (outside any container that scrolls them).
 */
export async function overflow(page: Page): Promise<{ by: number; culprits: string[] }> {
  return page.evaluate(`(() => {
    const by = document.scrollingElement.scrollWidth - window.innerWidth;
    // Inside a box that scrolls or clips it, unless positioned out of it (absolute, with no
    // positioned box in between: such an element widens the page from inside a scroller).
    const scrolled = (el) => {
      let free = ['absolute', 'fixed'].includes(getComputedStyle(el).position);
      for (let p = el.parentElement; p; p = p.parentElement) {
        const style = getComputedStyle(p);
        if (!free && ['auto', 'scroll', 'hidden'].includes(style.overflowX)) return true;
        if (free && style.position !== 'static') free = false;
        if (!free && ['auto', 'scroll', 'hidden'].includes(style.overflowX)) return true;
      }
      return false;
    };
    const out = [...document.body.querySelectorAll('*')].filter((el) =>
      el.getBoundingClientRect().right > window.innerWidth + 0.5 && !scrolled(el));
    const outermost = out.filter((el) => !out.includes(el.parentElement));
    const name = (el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') +
      (el.classList.length ? '.' + [...el.classList].join('.') : '');
    return { by, culprits: by > 0 ? outermost.slice(0, 5).map(name) : [] };
  })()`);
}

export interface TabWalk {
  /** Controls that Tab never reached. */
  unreached: string[];
  /** Controls that Tab reached with no outline drawn around them. */
  invisible: string[];
  /** How many controls the walk reached. */
  reached: number;
}

/**
 * Presses Tab from the top of the page until the focus comes round again, and compares what it
 * reached with every visible, enabled control of the page (links, buttons, fields, <summary>).
 */
export async function tabWalk(page: Page): Promise<TabWalk> {
  const controls = (await page.evaluate(`(() => {
    const all = [...document.querySelectorAll('a[href], button, input, select, textarea, summary')]
      .filter((el) => !el.disabled && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden');
    all.forEach((el, i) => el.setAttribute('data-walk', String(i)));
    return all.map((el) => el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + ' "' +
      (el.getAttribute('aria-label') || el.textContent || el.getAttribute('type') || '').trim().slice(0, 40) + '"');
  })()`)) as string[];
  // Wherever the focus starts, Tab goes on to the end, out of the page and in again from the top:
  // the walk ends when it meets a control for the second time.
  const seen = new Set<number>();
  const invisible: string[] = [];
  let outside = 0;
  let previous = -1;
  // A date-time field takes a Tab per part (day, month, year, hours…).
  for (let presses = 0; presses < 8 * controls.length + 10; presses += 1) {
    await page.keyboard.press('Tab');
    const at = (await page.evaluate(`(() => {
      const el = document.activeElement;
      if (!el || el === document.body) return null;
      const style = getComputedStyle(el);
      const outlined = style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2;
      return { index: el.getAttribute('data-walk'), outlined };
    })()`)) as { index: string | null; outlined: boolean } | null;
    if (at === null) {
      // Past the last control the focus leaves the page; it comes back at the next Tab.
      if (++outside > 2) break;
      continue;
    }
    if (at.index === null) continue; // a focusable element that is not a control (a scrolled table)
    const index = Number(at.index);
    if (index === previous) continue; // still in the same date-time field
    if (seen.has(index)) break;
    previous = index;
    seen.add(index);
    if (!at.outlined) invisible.push(controls[index] as string);
  }
  return {
    unreached: controls.filter((_, i) => !seen.has(i)),
    invisible,
    reached: seen.size,
  };
}

/** What has the focus: its id, its name (aria-label or text), its tag. */
interface Focused {
  id: string;
  name: string;
  tag: string;
}

/**
 * Presses Tab until the focus is on the control that `wanted` picks (by name, id or tag), as a
 * person without a mouse gets to it; throws if Tab never gets there.
 */
export async function tabTo(page: Page, wanted: (focused: Focused) => boolean, what: string): Promise<void> {
  for (let presses = 0; presses < 150; presses += 1) {
    await page.keyboard.press('Tab');
    const focused = (await page.evaluate(`(() => {
      const el = document.activeElement;
      if (!el || el === document.body) return null;
      return { id: el.id, tag: el.tagName.toLowerCase(),
        name: (el.getAttribute('aria-label') || el.textContent || '').trim() };
    })()`)) as Focused | null;
    if (focused && wanted(focused)) return;
  }
  throw new Error(`Tab never reached ${what}`);
}

/** tabTo a control by its name, or its id as `#id`. */
export function tabToNamed(page: Page, name: string): Promise<void> {
  return tabTo(page, (f) => (name.startsWith('#') ? `#${f.id}` === name : f.name === name), name);
}
