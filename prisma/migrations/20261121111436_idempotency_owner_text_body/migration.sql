-- Idempotency records: `owner` fences renew/complete/release to the run holding the lease;
-- the stored answer becomes exact JSON text (JSONB would reorder keys and refuse \u0000).
-- AlterTable
ALTER TABLE "idempotency_records" ADD COLUMN     "owner" TEXT,
ALTER COLUMN "response_body" SET DATA TYPE TEXT;
