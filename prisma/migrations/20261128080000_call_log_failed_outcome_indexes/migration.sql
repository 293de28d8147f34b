-- The call log's two outcome indexes hold only failed calls: a successful call (nearly every call)
-- updates five indexes instead of seven. Pages of ok calls read the index without the outcome.
-- DropIndex
DROP INDEX "call_log_client_id_outcome_at_id_idx";

-- DropIndex
DROP INDEX "call_log_outcome_at_id_idx";

-- CreateIndex
CREATE INDEX "call_log_client_id_outcome_at_id_idx" ON "call_log"("client_id", "outcome", "at", "id") WHERE (outcome <> 'ok');

-- CreateIndex
CREATE INDEX "call_log_outcome_at_id_idx" ON "call_log"("outcome", "at", "id") WHERE (outcome <> 'ok');


