-- CreateTable
CREATE TABLE "catalog_tools" (
    "app_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "view" TEXT NOT NULL,

    CONSTRAINT "catalog_tools_pkey" PRIMARY KEY ("app_id","name")
);

-- AddForeignKey
ALTER TABLE "catalog_tools" ADD CONSTRAINT "catalog_tools_app_id_fkey" FOREIGN KEY ("app_id") REFERENCES "apps"("id") ON DELETE CASCADE ON UPDATE CASCADE;
