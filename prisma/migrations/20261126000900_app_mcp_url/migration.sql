-- AlterTable
ALTER TABLE "apps" ADD COLUMN     "mcp_url" TEXT;
