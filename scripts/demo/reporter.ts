/**
 * How the demo talks to a newcomer: numbered steps, indented details, and a check that stops the
 * demo with a clear message when something did not happen as it should.
 */

/** A step that did not do what the demo expected: the demo stops and exits 1. */
export class DemoFailure extends Error {
  override name = 'DemoFailure';
}

export interface Reporter {
  step(title: string): void;
  detail(text: string): void;
  ok(text: string): void;
  check(condition: unknown, failure: string): asserts condition;
  /** How many steps ran. */
  readonly steps: number;
}

export function createReporter(
  total: number,
  write: (text: string) => void = (t) => process.stdout.write(t),
): Reporter {
  let steps = 0;
  return {
    get steps() {
      return steps;
    },
    step(title) {
      steps += 1;
      write(`\n[${steps}/${total}] ${title}\n`);
    },
    detail(text) {
      for (const line of text.split('\n')) write(`      ${line}\n`);
    },
    ok(text) {
      write(`      ✓ ${text}\n`);
    },
    check(condition, failure): asserts condition {
      if (!condition) throw new DemoFailure(failure);
    },
  };
}

/** A URL for printing: long opaque query values (codes, states) shortened; URLs kept whole. */
export function shortUrl(url: string | URL): string {
  const parsed = new URL(url);
  const query = [...parsed.searchParams]
    .map(([name, value]) => {
      const opaque = value.length > 16 && !/^https?:\/\//.test(value);
      return `${name}=${opaque ? `${value.slice(0, 8)}…` : value}`;
    })
    .join('&');
  return `${parsed.origin}${parsed.pathname}${query ? `?${query}` : ''}`;
}
