/**
 * A browser for sign-in tests, without a browser engine: a cookie jar per origin, redirects
 * followed by hand (so each hop's cookies are kept, as a browser keeps them), and the login
 * provider's interaction answered for the account this browser signs in as (the oidc-provider
 * fixture approves `/interaction/…?account=<name>` at once). It stops at the first page (HTML with
 * a 2xx or 4xx status) or at the first redirect that leaves the servers it knows (the client's
 * redirect URI), and can post the consent form as a person would.
 */

export type Visit =
  | { kind: 'page'; url: URL; status: number; html: string; headers: Headers }
  | { kind: 'left'; url: URL };

export class Browser {
  readonly #jar = new Map<string, Map<string, string>>();

  constructor(
    /** Origins this browser follows redirects within (toolgate's, the login provider's). */
    private readonly known: string[],
    /** The account it signs in as at the login provider. */
    public account: string,
  ) {}

  cookies(origin: string): Map<string, string> {
    let jar = this.#jar.get(origin);
    if (!jar) {
      jar = new Map();
      this.#jar.set(origin, jar);
    }
    return jar;
  }

  /** Opens `url` and follows redirects until a page or a redirect elsewhere. */
  async open(
    url: string | URL,
    init: { method?: string; body?: string; headers?: Record<string, string> } = {},
  ): Promise<Visit> {
    let next = new URL(url);
    let request = init;
    for (let hop = 0; hop < 20; hop += 1) {
      const jar = this.cookies(next.origin);
      const response = await fetch(next, {
        method: request.method ?? 'GET',
        body: request.body,
        redirect: 'manual',
        headers: {
          ...request.headers,
          cookie: [...jar].map(([name, value]) => `${name}=${value}`).join('; '),
        },
      });
      for (const line of response.headers.getSetCookie()) {
        const [pair = ''] = line.split(';', 1);
        const at = pair.indexOf('=');
        const name = pair.slice(0, at);
        const value = pair.slice(at + 1);
        if (/max-age=0/i.test(line) || /expires=Thu, 01 Jan 1970/i.test(line) || value === '')
          jar.delete(name);
        else jar.set(name, value);
      }
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        await response.arrayBuffer();
        const target = new URL(location, next);
        if (!this.known.includes(target.origin)) return { kind: 'left', url: target };
        if (target.pathname.startsWith('/interaction/')) target.searchParams.set('account', this.account);
        next = target;
        request = {};
        continue;
      }
      return {
        kind: 'page',
        url: next,
        status: response.status,
        html: await response.text(),
        headers: response.headers,
      };
    }
    throw new Error('too many redirects');
  }

  /** Posts the consent form of `page` with `decision` (approve or deny), as its button does. */
  async decide(page: Visit, decision: 'approve' | 'deny'): Promise<Visit> {
    if (page.kind !== 'page') throw new Error(`not on a page: left for ${page.url.href}`);
    const field = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(page.html)?.[1];
    const action = /<form method="post" action="([^"]+)"/.exec(page.html)?.[1];
    const request = field('request');
    const formToken = field('form_token');
    if (!action || !request || !formToken)
      throw new Error(`no consent form on ${page.url.href}: ${page.html}`);
    const body = new URLSearchParams({ request, form_token: formToken, decision }).toString();
    return this.open(new URL(action, page.url), {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: page.url.origin },
    });
  }

  /** Opens an authorization URL, consents (or not), and answers the redirect back to the client. */
  async authorize(url: string | URL, decision: 'approve' | 'deny' = 'approve'): Promise<URL> {
    const consent = await this.open(url);
    if (consent.kind !== 'page' || consent.status !== 200)
      throw new Error(
        `expected the consent page, got ${JSON.stringify(consent.kind === 'page' ? [consent.status, consent.html] : consent.url.href)}`,
      );
    const back = await this.decide(consent, decision);
    if (back.kind !== 'left')
      throw new Error(`expected a redirect to the client, got ${back.status} ${back.html}`);
    return back.url;
  }
}
