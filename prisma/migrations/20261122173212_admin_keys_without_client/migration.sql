-- An API key may belong to no client: the admin key that the first start creates (admin calls
-- carry no client id). Client keys keep their client and its ON DELETE CASCADE.
ALTER TABLE "api_keys" ALTER COLUMN "client_id" DROP NOT NULL;
