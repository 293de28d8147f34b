/**
 * Lets the event loop answer what came meanwhile (timers, sockets) before going on. For a series of
 * statements on the embedded database: PGlite runs on the event loop and its statements answer
 * without waiting on I/O, so awaiting one after the other never lets another request in (GitHub's
 * registration held `/healthz` for over a second). On PostgreSQL a turn costs next to nothing.
 */
export function turn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
