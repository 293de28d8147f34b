-- An OAuth flow started from MCP has no client redirect URI: its callback ends on the server's own
-- page (/oauth/complete).
ALTER TABLE "oauth_states" ALTER COLUMN "redirect_uri" DROP NOT NULL;

-- Secrets the servers of a cluster share (the MCP requestState HMAC key), sealed by the KMS.
CREATE TABLE "server_secrets" (
    "name" TEXT NOT NULL,
    "sealed" BYTEA NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "server_secrets_pkey" PRIMARY KEY ("name")
);

-- What a 2025-era MCP client declared at `initialize` (stateless serving sees no session):
-- whether it takes URL elicitations, per API key and end user.
CREATE TABLE "mcp_clients" (
    "api_key_id" TEXT NOT NULL,
    "user_id" TEXT NOT NULL,
    "url_elicitation" BOOLEAN NOT NULL,
    "updated_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "mcp_clients_pkey" PRIMARY KEY ("api_key_id", "user_id")
);
