/**
 * The compile worker thread: compiles documents off the server's event loop (CONTRACT.md §5,
 * "registering never stalls the server"). One job at a time; every answer is plain text and small
 * arrays, cheap to hand back to the main thread.
 */
import { parentPort } from 'node:worker_threads';
import { type CompileOptions, compileDocument } from './catalog.ts';

export interface CompileJob {
  id: number;
  input: unknown;
  options: CompileOptions;
}

parentPort?.on('message', async (job: CompileJob) => {
  try {
    const outcome = await compileDocument(job.input, job.options);
    parentPort?.postMessage({ id: job.id, outcome });
  } catch (error) {
    parentPort?.postMessage({ id: job.id, failure: error instanceof Error ? error.message : String(error) });
  }
});
