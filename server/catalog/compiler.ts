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
import { err, ok, type Result } from '../result.ts';
import type { CompiledDocument, CompileOptions } from './catalog.ts';
import type { CompileJob } from './compile-worker.ts';
import type { BodyRead } from './stand-in.ts';
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

type Answer =
  | { id: number; outcome: Result<CompiledDocument, Issue[]> }
  | { id: number; read: BodyRead; bytes: Uint8Array }
  | { id: number; failure: string };

/** What a job waits for: its answer, or a refusal of ours (time-out, out of memory, shut down). */
interface Pending {
  job: CompileJob;
  /** Bytes handed over, not copied (the job's own buffer). */
  transfer: ArrayBuffer[];
  answer(answer: Answer): void;
  refuse(message: string): void;
}

/**
 * A registration body read on the worker (`readBody`): compile its document with `compile`. The
 * bytes stay here until then (the worker may forget the document it parsed; it is read again).
 */
export interface ReadBody {
  readonly readId: number;
  readonly bytes: Uint8Array;
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
   * stored (packed) document, or a registration body read by `readBody` (its `openapi` is compiled).
   */
  compile(input: unknown, options: CompileOptions = {}): Promise<Result<CompiledDocument, Issue[]>> {
    this.#jobs += 1;
    return new Promise((resolve) => {
      const id = this.#nextId++;
      const body = input instanceof ReadBodyHandle ? input : undefined;
      this.#enqueue({
        job: body
          ? { id, kind: 'compile-body', bytes: body.bytes, readId: body.readId, options }
          : { id, kind: 'compile', input, options },
        // The body's bytes are not needed here any more: moved to the worker, not copied.
        transfer: body ? [body.take()] : [],
        answer: (answer) =>
          resolve(
            'outcome' in answer
              ? answer.outcome
              : refused(
                  `The document could not be compiled: ${'failure' in answer ? answer.failure : 'no outcome'}.`,
                ),
          ),
        refuse: (message) => resolve(refused(message)),
      });
    });
  }

  /**
   * Reads a registration body (UTF-8 JSON) on the worker: the body with its `openapi` stood in for
   * (stand-in.ts) and, when it was, the handle to compile that document with (`compile(document)`);
   * or why the body does not read (`refused`: the worker could not read it at all).
   */
  readBody(
    bytes: Uint8Array,
  ): Promise<
    Result<{ body: unknown; document: ReadBody | null }, 'malformed_json' | 'too_deep' | { refused: string }>
  > {
    // The bytes are the caller's (a socket's chunk may share its memory): this copy is ours alone,
    // moved to the worker and back with the answer (`bytes`), then to the worker for the compile.
    const own = new Uint8Array(bytes);
    const readId = this.#nextId++;
    return new Promise((resolve) => {
      this.#enqueue({
        job: { id: readId, kind: 'read', bytes: own },
        transfer: [own.buffer],
        answer: (answer) => {
          if (!('read' in answer)) {
            const why = 'failure' in answer ? answer.failure : 'no answer';
            resolve(err({ refused: `The body could not be read: ${why}.` }));
            return;
          }
          const { read } = answer;
          if (!read.ok) resolve(read);
          else {
            const document = read.value.stoodIn ? new ReadBodyHandle(readId, answer.bytes) : null;
            resolve(ok({ body: read.value.body, document }));
          }
        },
        refuse: (message) => resolve(err({ refused: message })),
      });
    });
  }

  /** Stops the worker (pending jobs are answered as refused). */
  async close(): Promise<void> {
    for (const pending of this.#queue.splice(0)) pending.refuse('The server is shutting down.');
    const worker = this.#worker;
    this.#worker = undefined;
    if (this.#running) {
      clearTimeout(this.#running.timer);
      this.#running.refuse('The server is shutting down.');
      this.#running = undefined;
    }
    if (worker) await worker.terminate();
  }

  #enqueue(pending: Pending): void {
    this.#queue.push(pending);
    this.#pump();
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
      this.#finish((pending) =>
        pending.refuse(`The document took longer than ${this.#limits.timeoutMs / 1000} s to compile.`),
      );
    }, this.#limits.timeoutMs);
    this.#running = { ...next, timer, worker };
    worker.postMessage(next.job, next.transfer);
  }

  #finish(settle: (pending: Pending) => void): void {
    const running = this.#running;
    if (!running) return;
    clearTimeout(running.timer);
    this.#running = undefined;
    settle(running);
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
      this.#finish((pending) => pending.answer(answer));
    });
    worker.on('error', (error: Error & { code?: string }) => {
      if (this.#worker === worker) this.#worker = undefined;
      if (!mine()) return;
      this.#finish((pending) =>
        pending.refuse(
          error.code === 'ERR_WORKER_OUT_OF_MEMORY'
            ? `The document needs more than ${this.#limits.heapMb} MiB to compile.`
            : `The document could not be compiled: ${error.message}.`,
        ),
      );
    });
    worker.on('exit', () => {
      if (this.#worker === worker) this.#worker = undefined;
      if (mine())
        this.#finish((pending) =>
          pending.refuse('The document could not be compiled: the compiler stopped.'),
        );
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

/** A body read by `readBody`; its bytes are handed to the worker by the compile (once). */
class ReadBodyHandle implements ReadBody {
  #bytes: Uint8Array | undefined;

  constructor(
    readonly readId: number,
    bytes: Uint8Array,
  ) {
    this.#bytes = bytes;
  }

  get bytes(): Uint8Array {
    if (!this.#bytes) throw new Error('this body was compiled already');
    return this.#bytes;
  }

  /** The bytes' buffer, to move to the worker: this handle no longer holds it. */
  take(): ArrayBuffer {
    const buffer = this.bytes.buffer as ArrayBuffer;
    this.#bytes = undefined;
    return buffer;
  }
}

function refused(message: string): Result<CompiledDocument, Issue[]> {
  return err([{ path: '/openapi', message }]);
}
