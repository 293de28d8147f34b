/**
 * The repository's example upstream, `examples/pets-upstream.mjs`, run as the README runs it (a
 * `node` process) on a free port, with its document `examples/pets.openapi.json`: for tests that
 * hold the README, /docs' examples and the MCP client configurations to the example app.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { freePort } from './ports.ts';

const EXAMPLES = fileURLToPath(new URL('../../examples/', import.meta.url));

export interface PetsExample {
  /** Base URL of the pets API: an app registration's `baseUrl`. */
  url: string;
  /** examples/pets.openapi.json. */
  openapi: Record<string, unknown>;
  close(): Promise<void>;
}

/** The registration the README makes: app `pets`, provider `example.pets`, no auth. */
export function petsRegistration(pets: PetsExample) {
  return { provider: 'example.pets', baseUrl: pets.url, openapi: pets.openapi, auth: { type: 'none' } };
}

export async function startPetsExample(): Promise<PetsExample> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [`${EXAMPLES}pets-upstream.mjs`], {
    env: { ...process.env, PETS_PORT: String(port) },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await new Promise<void>((resolve, reject) => {
    let said = '';
    child.stderr?.on('data', (chunk) => {
      said += chunk;
      if (said.includes('pets upstream on')) resolve();
    });
    void exited.then(() => reject(new Error(`examples/pets-upstream.mjs exited: ${said}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    openapi: JSON.parse(readFileSync(`${EXAMPLES}pets.openapi.json`, 'utf8')),
    close: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
