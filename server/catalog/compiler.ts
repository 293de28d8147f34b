/**
 * Compiles documents on a worker thread, so a large registration (GitHub's 11 MB, Kubernetes'
 * thousands of operations) never blocks the event loop that answers every other request.
 *
 * Measured (BENCHMARKS.md): compiling on the main thread held `/healthz` for the whole compile;
 * per-tool lazy compilation alone would still parse, convert and check the whole document in one
 * go at registration. The worker is started on first use (its start, loading the catalog modules,
 * costs about a second), runs one job at a time, and stops after 30 idle seconds: a burst of
 * registrations shares one worker, and an idle server does not keep a second V8 heap (tens of MB)
 * around. Its heap is capped and each job has a time limit: a document that would need more is
 * refused (400), and the worker is replaced — the server itself never runs out of memory.
 */
import { Worker } from 'node:worker_threads';
import { err, type Result } from '../result.ts';
import type { CompiledDocument, CompileOptions } from './catalog.ts';
import type { CompileJob } from './compile-worker.ts';
import type { Issue } from './types.ts';

export interface CompilerLimits {
  /** Heap of the worker thread, in MiB. */
  heapMb: number;
  /** Time one document may take, in milliseconds. */
  timeoutMs: number;
  /** How long an idle worker is kept, in milliseconds. */
  idleMs: number;
}

export const DEFAULT_COMPILER_LIMITS: CompilerLimits = { heapMb: 2048, timeoutMs: 120_000, idleMs: 30_000 };

type Answer = { id: number; outcome: Result<CompiledDocument, Issue[]> } | { id: number; failure: string };

interface Pending {
  job: CompileJob;
  resolve(outcome: Result<CompiledDocument, Issue[]>): void;
}

export class DocumentCompiler {
  readonly #limits: CompilerLimits;
  readonly #queue: Pending[] = [];
  #worker: Worker | undefined;
  #running: (Pending & { timer: NodeJS.Timeout; worker: Worker }) | undefined;
  #idle: NodeJS.Timeout | undefined;
  #nextId = 1;
  #jobs = 0;

  constructor(limits: Partial<CompilerLimits> = {}) {
    this.#limits = { ...DEFAULT_COMPILER_LIMITS, ...limits };
  }

  /** Documents compiled (or refused) by this compiler so far. */
  get jobs(): number {
    return this.#jobs;
  }

  /**
   * The compiled document, or the issues that refuse it (issues point into the registration).
   * `catalogText` and `documentText` come back packed for storage (`packing.ts`); `input` may be a
   * stored (packed) document.
   */
  compile(input: unknown, options: CompileOptions = {}): Promise<Result<CompiledDocument, Issue[]>> {
    this.#jobs += 1;
    return new Promise((resolve) => {
      this.#queue.push({ job: { id: this.#nextId++, input, options }, resolve });
      this.#pump();
    });
  }

  /** Stops the worker (pending jobs are answered as refused). */
  async close(): Promise<void> {
    for (const pending of this.#queue.splice(0)) pending.resolve(refused('The server is shutting down.'));
    const worker = this.#worker;
    this.#worker = undefined;
    if (this.#running) {
      clearTimeout(this.#running.timer);
      this.#running.resolve(refused('The server is shutting down.'));
      this.#running = undefined;
    }
    if (worker) await worker.terminate();
  }

  #pump(): void {
    if (this.#running) return;
    const next = this.#queue.shift();
    if (!next) {
      this.#idle = setTimeout(() => void this.#stopWorker(), this.#limits.idleMs);
      this.#idle.unref();
      return;
    }
    clearTimeout(this.#idle);
    const worker = this.#ensureWorker();
    const timer = setTimeout(() => {
      void this.#stopWorker();
      this.#finish(refused(`The document took longer than ${this.#limits.timeoutMs / 1000} s to compile.`));
    }, this.#limits.timeoutMs);
    this.#running = { ...next, timer, worker };
    worker.postMessage(next.job);
  }

  #finish(outcome: Result<CompiledDocument, Issue[]>): void {
    const running = this.#running;
    if (!running) return;
    clearTimeout(running.timer);
    this.#running = undefined;
    running.resolve(outcome);
    this.#pump();
  }

  #ensureWorker(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(new URL('./compile-worker.mjs', import.meta.url), {
      resourceLimits: { maxOldGenerationSizeMb: this.#limits.heapMb },
    });
    worker.unref();
    const mine = () => this.#running?.worker === worker;
    worker.on('message', (answer: Answer) => {
      if (!mine() || answer.id !== this.#running?.job.id) return;
      this.#finish(
        'outcome' in answer
          ? answer.outcome
          : refused(`The document could not be compiled: ${answer.failure}.`),
      );
    });
    worker.on('error', (error: Error & { code?: string }) => {
      if (this.#worker === worker) this.#worker = undefined;
      if (!mine()) return;
      this.#finish(
        refused(
          error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? `The document needs more than ${this.#limits.heapMb} MiB to compile.`
            : `The document could not be compiled: ${error.message}.`,
        ),
      );
    });
    worker.on('exit', () => {
      if (this.#worker === worker) this.#worker = undefined;
      if (mine()) this.#finish(refused('The document could not be compiled: the compiler stopped.'));
    });
    this.#worker = worker;
    return worker;
  }

  async #stopWorker(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    if (worker) await worker.terminate();
  }
}

function refused(message: string): Result<CompiledDocument, Issue[]> {
  return err([{ path: '/openapi', message }]);
}
