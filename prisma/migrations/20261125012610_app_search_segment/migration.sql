-- AlterTable
ALTER TABLE "apps" ADD COLUMN     "search" TEXT;
