/**
 * The framework packages are optional peer dependencies: an adapter loads its own when first
 * used, so `@toolgate/sdk` installs without any of them, and a missing one is named plainly.
 */

/**
 * An adapter was used without the framework package it works with.
 *
 * @example
 * try {
 *   await createAiTools(toolgate, { userId });
 * } catch (error) {
 *   if (error instanceof MissingPeerError) console.error(error.message); // … npm install ai
 * }
 */
export class MissingPeerError extends Error {
  readonly code = 'ERR_TOOLGATE_MISSING_PEER';
  /** The package to install. */
  readonly peer: string;
  constructor(entry: string, peer: string, range: string, cause: unknown) {
    super(
      `${entry} needs the package "${peer}" (${range}), an optional peer dependency of @toolgate/sdk that is not installed: npm install ${peer}`,
      { cause },
    );
    this.name = 'MissingPeerError';
    this.peer = peer;
  }
}

/**
 * Runs `load` (an `import()` of the peer, written out so bundlers see it) and turns "module not
 * found" for that peer into a {@link MissingPeerError}; any other failure is rethrown as it is.
 */
export async function importPeer<T>(
  load: () => Promise<T>,
  entry: string,
  peer: string,
  range: string,
): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
    const notFound = code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND';
    if (
      notFound &&
      typeof message === 'string' &&
      (message.includes(`'${peer}'`) || message.includes(`'${peer}/`))
    ) {
      throw new MissingPeerError(entry, peer, range, error);
    }
    throw error;
  }
}
