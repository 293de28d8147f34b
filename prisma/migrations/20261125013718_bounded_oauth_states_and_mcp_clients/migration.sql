-- Issue 23: at most 20 live OAuth states per (client, user, app), the oldest dropped first, and at
-- most 50 remembered 2025-era MCP clients per API key, the least recently initialized dropped first.
-- `seq` orders the states as the database received them, whatever the clocks of the servers.

-- AlterTable
ALTER TABLE "oauth_states" ADD COLUMN     "seq" BIGSERIAL NOT NULL;

-- CreateIndex
CREATE INDEX "oauth_states_client_id_user_id_app_id_idx" ON "oauth_states"("client_id", "user_id", "app_id");

-- CreateIndex
CREATE INDEX "mcp_clients_api_key_id_updated_at_idx" ON "mcp_clients"("api_key_id", "updated_at");
