-- App documents are kept as text (their key order is the tools' order), no longer as a JSON
-- wrapper around that text; the compiled catalog is stored beside them, so no process compiles a
-- large document again on first use.
ALTER TABLE "apps" ALTER COLUMN "openapi" TYPE TEXT USING COALESCE("openapi"->>'$text', "openapi"::text);
ALTER TABLE "apps" ADD COLUMN "catalog" TEXT;
