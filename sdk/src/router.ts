import type {
  TRPC_ERROR_CODE_NUMBER,
  TRPCBuiltRouter,
  TRPCMutationProcedure,
  TRPCQueryProcedure,
} from '@trpc/server';
import type { z } from 'zod';
import type { ErrorBody } from '../../shared/errors.ts';
import type {
  addRedirectUriInput,
  clientSchema,
  createApiKeyInput,
  createApiKeyOutput,
  createClientInput,
  listAdminConnectionsInput,
  listAdminConnectionsOutput,
  listApiKeysInput,
  listApiKeysOutput,
  listClientsOutput,
  listRedirectUrisInput,
  listRedirectUrisOutput,
  okOutput,
  redirectUriOutput,
  removeAdminConnectionInput,
  removeRedirectUriInput,
  revokeApiKeyInput,
} from '../../shared/schemas/admin.ts';
import type { listToolsInput, listToolsOutput, proxyInput, proxyOutput } from '../../shared/schemas/agent.ts';
import type {
  appIdInput,
  appSchema,
  listAppsOutput,
  putAppInput,
  putAppOutput,
} from '../../shared/schemas/apps.ts';
import type {
  deleteConnectionInput,
  initiateOAuthInput,
  initiateOAuthOutput,
  listConnectionsInput,
  listConnectionsOutput,
} from '../../shared/schemas/oauth.ts';
import type {
  listAuditInput,
  listAuditOutput,
  listCallsInput,
  listCallsOutput,
  verifyAuditOutput,
} from '../../shared/schemas/observe.ts';

/**
 * What a tRPC error carries: the contract's error body under `data.contract`
 * (the server's error formatter, `server/trpc.ts`).
 */
export interface ToolgateErrorShape {
  message: string;
  code: TRPC_ERROR_CODE_NUMBER;
  data: { contract: ErrorBody };
}

type Def<I extends z.ZodType, O extends z.ZodType> = { input: z.input<I>; output: z.output<O>; meta: object };
type Query<I extends z.ZodType, O extends z.ZodType> = TRPCQueryProcedure<Def<I, O>>;
type Mutation<I extends z.ZodType, O extends z.ZodType> = TRPCMutationProcedure<Def<I, O>>;
type Empty = z.ZodObject<Record<never, never>>;

/**
 * The server's tRPC router as its clients see it: every procedure with the input and output
 * types of the contract's schemas (`shared/schemas`), and the error shape.
 *
 * It is written out here rather than imported from the server, whose router type drags the whole
 * server (Prisma, pino, its context) into any declaration that names it. A compile-time test
 * (`test/sdk/router-type.test.ts`) holds it equal to the server's `AppRouter`, procedure by
 * procedure, so the two cannot drift apart unnoticed.
 */
export type AppRouter = TRPCBuiltRouter<
  { ctx: object; meta: object; errorShape: ToolgateErrorShape; transformer: false },
  {
    proxy: Mutation<typeof proxyInput, typeof proxyOutput>;
    tools: { list: Query<typeof listToolsInput, typeof listToolsOutput> };
    initiateOAuth: Mutation<typeof initiateOAuthInput, typeof initiateOAuthOutput>;
    connections: {
      list: Query<typeof listConnectionsInput, typeof listConnectionsOutput>;
      remove: Mutation<typeof deleteConnectionInput, typeof okOutput>;
    };
    admin: {
      clients: {
        create: Mutation<typeof createClientInput, typeof clientSchema>;
        list: Query<Empty, typeof listClientsOutput>;
      };
      redirectUris: {
        add: Mutation<typeof addRedirectUriInput, typeof redirectUriOutput>;
        list: Query<typeof listRedirectUrisInput, typeof listRedirectUrisOutput>;
        remove: Mutation<typeof removeRedirectUriInput, typeof okOutput>;
      };
      apiKeys: {
        create: Mutation<typeof createApiKeyInput, typeof createApiKeyOutput>;
        list: Query<typeof listApiKeysInput, typeof listApiKeysOutput>;
        revoke: Mutation<typeof revokeApiKeyInput, typeof okOutput>;
      };
      apps: {
        put: Mutation<typeof putAppInput, typeof putAppOutput>;
        list: Query<Empty, typeof listAppsOutput>;
        get: Query<typeof appIdInput, typeof appSchema>;
        remove: Mutation<typeof appIdInput, typeof okOutput>;
        refresh: Mutation<typeof appIdInput, typeof putAppOutput>;
      };
      calls: { list: Query<typeof listCallsInput, typeof listCallsOutput> };
      audit: {
        list: Query<typeof listAuditInput, typeof listAuditOutput>;
        verify: Query<Empty, typeof verifyAuditOutput>;
      };
      tools: { list: Query<typeof listToolsInput, typeof listToolsOutput> };
      connections: {
        list: Query<typeof listAdminConnectionsInput, typeof listAdminConnectionsOutput>;
        remove: Mutation<typeof removeAdminConnectionInput, typeof okOutput>;
      };
    };
  }
>;
