/**
 * The compile worker thread: compiles documents off the server's event loop (docs/reference.md "Administration",
 * "registering never stalls the server"). One job at a time; every answer is text (packed for
 * storage, `packing.ts`) and small arrays, cheap to hand back to the main thread. A stored
 * (packed) document is accepted as input, for recompiling a stored app.
 *
 * A registration's body is read here too (`read`), not on the event loop: GitHub's 13 MB took the
 * main thread about 0.4 s to decode, check for depth and parse, and as long again to copy into
 * this thread. The main thread gets back the body without its document (`openapi` stood in for),
 * and later asks for the compile of that body (`compile-body`), sending the bytes again: the
 * document parsed by the read is kept for that compile, or parsed again if another read came between.
 */
import { parentPort } from 'node:worker_threads';
import { parseJson } from '../http/body.ts';
import type { Result } from '../result.ts';
import { type CompileOptions, compileDocument } from './catalog.ts';
import { compileMcpTools } from './mcp-catalog.ts';
import { packText, unpackText } from './packing.ts';
import { type BodyRead, standInDocument } from './stand-in.ts';

export type CompileJob =
  /** Compile a document (or a stored, packed one; or an MCP server's tools/list). */
  | { id: number; kind: 'compile'; input: unknown; options: CompileOptions }
  /** Read a registration body (UTF-8 JSON). */
  | { id: number; kind: 'read'; bytes: Uint8Array }
  /** Compile the `openapi` of the body that the read job `readId` read. */
  | { id: number; kind: 'compile-body'; bytes: Uint8Array; readId: number; options: CompileOptions };

/** The bytes go back (moved, not copied): the main thread keeps them for the compile. */
type ReadAnswer = { id: number; read: BodyRead; bytes: Uint8Array };

/** The document of the last body read, kept for its compile. */
let held: { readId: number; document: unknown } | undefined;

function readBody(bytes: Uint8Array): Result<unknown, 'malformed_json' | 'too_deep'> {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  return parseJson(text) as Result<unknown, 'malformed_json' | 'too_deep'>;
}

async function run(job: CompileJob): Promise<unknown> {
  if (job.kind === 'read') {
    held = undefined;
    const read = readBody(job.bytes);
    if (!read.ok) return { id: job.id, read, bytes: job.bytes } satisfies ReadAnswer;
    const { body, document } = standInDocument(read.value);
    if (document !== undefined) held = { readId: job.id, document };
    return {
      id: job.id,
      read: { ok: true, value: { body, stoodIn: document !== undefined } },
      bytes: job.bytes,
    } satisfies ReadAnswer;
  }
  let input: unknown;
  if (job.kind === 'compile-body') {
    if (held?.readId === job.readId) input = held.document;
    else {
      const read = readBody(job.bytes);
      // The same bytes read well before: anything else is a failure of ours.
      if (!read.ok) throw new Error('the registration body no longer reads');
      input = (read.value as { openapi?: unknown }).openapi;
    }
    held = undefined;
  } else {
    input = typeof job.input === 'string' ? unpackText(job.input) : job.input;
  }
  const outcome = job.options.mcp
    ? compileMcpTools(input, job.options)
    : await compileDocument(input, job.options);
  // Stored packed: the main thread then writes a seventh of the bytes (see packing.ts).
  if (outcome.ok) {
    outcome.value.catalogText = packText(outcome.value.catalogText);
    outcome.value.documentText = packText(outcome.value.documentText);
    outcome.value.searchText = packText(outcome.value.searchText);
  }
  return { id: job.id, outcome };
}

parentPort?.on('message', async (job: CompileJob) => {
  try {
    const answer = await run(job);
    const bytes = (answer as Partial<ReadAnswer>).bytes;
    parentPort?.postMessage(answer, bytes ? [bytes.buffer as ArrayBuffer] : []);
  } catch (error) {
    parentPort?.postMessage({ id: job.id, failure: error instanceof Error ? error.message : String(error) });
  }
});
