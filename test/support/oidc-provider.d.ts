// oidc-provider ships no types: the narrow part test/support/oauth-provider.ts uses.
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface KoaContext {
    method: string;
    path: string;
    query: Record<string, string | string[] | undefined>;
    req: IncomingMessage;
    res: ServerResponse;
    status: number;
    type: string;
    body: unknown;
    redirect(url: string): void;
  }

  interface Client {
    grantTypeAllowed(type: string): boolean;
  }

  interface InteractionDetails {
    uid: string;
    grantId?: string;
    prompt: { name: string; details: Record<string, unknown> };
    session?: { accountId?: string };
    params: Record<string, unknown>;
  }

  interface GrantInstance {
    addOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
  }

  interface GrantModel {
    new (properties: { accountId: string; clientId: string }): GrantInstance;
    find(id: string): Promise<GrantInstance | undefined>;
    adapter: { destroy(id: string): Promise<void> };
  }

  interface TokenModel {
    find(token: string): Promise<{ isValid: boolean; accountId?: string } | undefined>;
    revokeByGrantId(grantId: string): Promise<void>;
    adapter: { destroy(id: string): Promise<void> };
  }

  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown>);
    Grant: GrantModel;
    AccessToken: TokenModel;
    RefreshToken: TokenModel;
    AuthorizationCode: TokenModel;
    on(event: string, listener: (...args: never[]) => void): this;
    use(middleware: (ctx: KoaContext, next: () => Promise<void>) => Promise<void>): void;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionResult(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<string>;
  }
}
