-- Issue 24: MCP clients sign in with OAuth (registered or metadata-document clients, the person's
-- sign-in at the OIDC provider, consent requests, codes, token families and URL-elicitation links).
-- Codes and tokens are stored only as SHA-256 hashes; the sign-in's PKCE verifier is sealed.

-- CreateTable
CREATE TABLE "signin_clients" (
    "client_id" TEXT NOT NULL,
    "public_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "fetched_at" TIMESTAMP(3),
    "created_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "signin_clients_pkey" PRIMARY KEY ("client_id")
);

-- CreateTable
CREATE TABLE "signin_logins" (
    "id" TEXT NOT NULL,
    "state_hash" TEXT NOT NULL,
    "verifier" BYTEA NOT NULL,
    "return_to" TEXT NOT NULL,
    "expires_at" TIMESTAMP(3) NOT NULL,
    "used_at" TIMESTAMP(3),
    "created_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "signin_logins_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "signin_requests" (
    "id" TEXT NOT NULL,
    "client_id" TEXT NOT NULL,
    "redirect_uri" TEXT NOT NULL,
    "state" TEXT,
    "code_challenge" TEXT NOT NULL,
    "scopes" TEXT[],
    "expires_at" TIMESTAMP(3) NOT NULL,
    "used_at" TIMESTAMP(3),
    "created_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "signin_requests_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "signin_codes" (
    "code_hash" TEXT NOT NULL,
    "client_id" TEXT NOT NULL,
    "redirect_uri" TEXT NOT NULL,
    "code_challenge" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "scopes" TEXT[],
    "expires_at" TIMESTAMP(3) NOT NULL,
    "used_at" TIMESTAMP(3),
    "grant_id" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "signin_codes_pkey" PRIMARY KEY ("code_hash")
);

-- CreateTable
CREATE TABLE "signin_grants" (
    "id" TEXT NOT NULL,
    "client_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "scopes" TEXT[],
    "created_at" TIMESTAMP(3) NOT NULL,
    "revoked_at" TIMESTAMP(3),

    CONSTRAINT "signin_grants_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "signin_tokens" (
    "hash" TEXT NOT NULL,
    "grant_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "expires_at" TIMESTAMP(3) NOT NULL,
    "used_at" TIMESTAMP(3),
    "created_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "signin_tokens_pkey" PRIMARY KEY ("hash")
);

-- CreateTable
CREATE TABLE "oauth_starts" (
    "id" TEXT NOT NULL,
    "client_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "app_id" TEXT NOT NULL,
    "expires_at" TIMESTAMP(3) NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "oauth_starts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "signin_clients_public_id_key" ON "signin_clients"("public_id");

-- CreateIndex
CREATE UNIQUE INDEX "signin_logins_state_hash_key" ON "signin_logins"("state_hash");

-- CreateIndex
CREATE INDEX "signin_logins_expires_at_idx" ON "signin_logins"("expires_at");

-- CreateIndex
CREATE INDEX "signin_requests_expires_at_idx" ON "signin_requests"("expires_at");

-- CreateIndex
CREATE INDEX "signin_codes_expires_at_idx" ON "signin_codes"("expires_at");

-- CreateIndex
CREATE INDEX "signin_grants_client_id_user_id_idx" ON "signin_grants"("client_id", "user_id");

-- CreateIndex
CREATE INDEX "signin_tokens_grant_id_idx" ON "signin_tokens"("grant_id");

-- CreateIndex
CREATE INDEX "signin_tokens_expires_at_idx" ON "signin_tokens"("expires_at");

-- CreateIndex
CREATE INDEX "oauth_starts_expires_at_idx" ON "oauth_starts"("expires_at");

-- AddForeignKey
ALTER TABLE "signin_tokens" ADD CONSTRAINT "signin_tokens_grant_id_fkey" FOREIGN KEY ("grant_id") REFERENCES "signin_grants"("id") ON DELETE CASCADE ON UPDATE CASCADE;
