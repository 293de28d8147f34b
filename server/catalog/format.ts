/**
 * The version of what the compile worker stores for an app: its catalog and its search segment
 * (server/search/segment.ts). Bumped whenever either changes; a stored catalog or segment of
 * another version is compiled again, both together, when the app is next loaded.
 */
export const CATALOG_FORMAT = 5;
