-- CreateTable
CREATE TABLE "call_log" (
    "id" BIGSERIAL NOT NULL,
    "at" TIMESTAMP(3) NOT NULL,
    "duration_ms" INTEGER NOT NULL,
    "surface" TEXT NOT NULL,
    "key_id" TEXT,
    "client_id" TEXT NOT NULL,
    "user_id" TEXT,
    "app_id" TEXT,
    "tool_id" TEXT,
    "outcome" TEXT NOT NULL,
    "status" INTEGER NOT NULL,
    "upstream_status" INTEGER,
    "idempotent_replay" BOOLEAN NOT NULL,
    "request_id" TEXT NOT NULL,

    CONSTRAINT "call_log_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "call_log_at_id_idx" ON "call_log"("at", "id");

-- CreateIndex
CREATE INDEX "call_log_client_id_at_id_idx" ON "call_log"("client_id", "at", "id");

-- CreateIndex
CREATE INDEX "call_log_client_id_outcome_at_id_idx" ON "call_log"("client_id", "outcome", "at", "id");

-- CreateIndex
CREATE INDEX "call_log_client_id_user_id_at_id_idx" ON "call_log"("client_id", "user_id", "at", "id");

-- CreateIndex
CREATE INDEX "call_log_app_id_at_id_idx" ON "call_log"("app_id", "at", "id");

-- CreateIndex
CREATE INDEX "call_log_tool_id_at_id_idx" ON "call_log"("tool_id", "at", "id");

-- CreateIndex
CREATE INDEX "call_log_outcome_at_id_idx" ON "call_log"("outcome", "at", "id");
