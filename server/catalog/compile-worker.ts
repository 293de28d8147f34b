/**
 * The compile worker thread: compiles documents off the server's event loop (docs/reference.md "Administration",
 * "registering never stalls the server"). One job at a time; every answer is text (packed for
 * storage, `packing.ts`) and small arrays, cheap to hand back to the main thread. A stored
 * (packed) document is accepted as input, for recompiling a stored app.
 */
import { parentPort } from 'node:worker_threads';
import { type CompileOptions, compileDocument } from './catalog.ts';
import { compileMcpTools } from './mcp-catalog.ts';
import { packText, unpackText } from './packing.ts';

export interface CompileJob {
  id: number;
  input: unknown;
  options: CompileOptions;
}

parentPort?.on('message', async (job: CompileJob) => {
  try {
    const input = typeof job.input === 'string' ? unpackText(job.input) : job.input;
    const outcome = job.options.mcp
      ? compileMcpTools(input, job.options)
      : await compileDocument(input, job.options);
    // Stored packed: the main thread then writes a seventh of the bytes (see packing.ts).
    if (outcome.ok) {
      outcome.value.catalogText = packText(outcome.value.catalogText);
      outcome.value.documentText = packText(outcome.value.documentText);
      outcome.value.searchText = packText(outcome.value.searchText);
    }
    parentPort?.postMessage({ id: job.id, outcome });
  } catch (error) {
    parentPort?.postMessage({ id: job.id, failure: error instanceof Error ? error.message : String(error) });
  }
});
