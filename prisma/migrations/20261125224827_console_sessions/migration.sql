-- Issue 25: web console sessions (an admin key exchanged for an HttpOnly cookie). Only the token's
-- SHA-256 is stored; the session dies with the key it was opened with.
-- CreateTable
CREATE TABLE "console_sessions" (
    "id" TEXT NOT NULL,
    "key_id" TEXT,
    "env_key_tag" TEXT,
    "created_at" TIMESTAMP(3) NOT NULL,
    "expires_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "console_sessions_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "console_sessions_expires_at_idx" ON "console_sessions"("expires_at");

-- CreateIndex
CREATE INDEX "console_sessions_key_id_idx" ON "console_sessions"("key_id");


