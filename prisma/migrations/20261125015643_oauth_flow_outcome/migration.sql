-- Issue 23: /oauth/complete shows only what the server knows. The callback of a flow started from
-- MCP records how it ended here, and the page reads it by the flow's id (the row's id).

-- AlterTable
ALTER TABLE "oauth_states" ADD COLUMN     "outcome" TEXT;
