/**
 * The end user, without a browser: opens the authorization URL, signs in and consents at the
 * provider (the provider fixture plays the user agent through its redirects), then follows the
 * provider's redirect to toolgate's `/handleOAuthCallback` and toolgate's redirect to the agent's
 * redirect URI — each hop a real HTTP request.
 *
 * @example
 * const visit = await consent(provider, authorizationUrl, { account: 'ada' });
 * console.log(visit.status); // 'success'
 */
import type { OAuthProviderFixture } from './oauth-provider.ts';

export interface ConsentOptions {
  /** The account that signs in at the provider (default `alice`). */
  account?: string;
  /** Say no at the provider. */
  deny?: boolean;
}

export interface Visit {
  /** Where the provider sent the browser back: toolgate's callback with `code` and `state`. */
  callbackUrl: URL;
  /** Where toolgate's callback redirected: the agent's redirect URI with `status` (and `reason`). */
  redirectedTo: URL;
  /** `status` on the agent's redirect URI: `success` or `error` (none on toolgate's own page). */
  status: string | null;
  reason: string | null;
  /** What the agent's page answered (status code). */
  landingStatus: number;
  /** What that page answered (its body as text). */
  landingText: string;
}

export async function consent(
  provider: Pick<OAuthProviderFixture, 'authorize'>,
  authorizationUrl: string,
  options: ConsentOptions = {},
): Promise<Visit> {
  const callbackUrl = await provider.authorize(authorizationUrl, {
    account: options.account ?? 'alice',
    ...(options.deny ? { deny: true } : {}),
  });
  const callback = await fetch(callbackUrl, { redirect: 'manual' });
  await callback.arrayBuffer();
  const location = callback.headers.get('location');
  if (callback.status !== 302 || !location) {
    throw new Error(`toolgate's callback answered ${callback.status} without a redirect`);
  }
  const redirectedTo = new URL(location, callbackUrl);
  const landing = await fetch(redirectedTo, { redirect: 'manual' });
  return {
    callbackUrl,
    redirectedTo,
    status: redirectedTo.searchParams.get('status'),
    reason: redirectedTo.searchParams.get('reason'),
    landingStatus: landing.status,
    landingText: await landing.text(),
  };
}
