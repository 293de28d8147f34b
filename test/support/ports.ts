/**
 * A port on 127.0.0.1 that nothing listens on (bound once, then released): for a server that must
 * know its port before it starts, and for a URL that refuses every connection. The one probe of the
 * repository is the demo's (scripts/demo/free-port.ts).
 */
export { freePort } from '../../scripts/demo/free-port.ts';
