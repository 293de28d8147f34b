-- Documents and catalogs are large (GitHub's document is 11 MB): kept out of line but not
-- compressed, because compressing them inside the embedded database (PGlite runs on the server's
-- event loop) held every other request for seconds while a large app registered.
ALTER TABLE "apps" ALTER COLUMN "openapi" SET STORAGE EXTERNAL;
ALTER TABLE "apps" ALTER COLUMN "catalog" SET STORAGE EXTERNAL;
