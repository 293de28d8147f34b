export declare class PgliteLockedError extends Error {
  readonly pid: number | 'unknown';
  constructor(dataDir: string, pid: number | 'unknown');
}

/** Takes `<dataDir>.lock`, waiting up to `waitMs` for a live holder; resolves to `release()`. */
export declare function lockPgliteDir(dataDir: string, options?: { waitMs?: number }): Promise<() => void>;
