import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from './api.ts';

/** Small pieces every page uses: loading data, showing errors, dates, confirmations. */

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

/**
 * Runs `load` now and whenever `keys` change (and on `reload()`); the answer of an older run that
 * finishes late is dropped, so a quick filter change never shows the previous filter's rows.
 */
export function useLoad<T>(load: () => Promise<T>, keys: readonly unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({
    data: undefined,
    error: undefined,
    loading: true,
  });
  const [round, setRound] = useState(0);
  const latest = useRef(0);
  useEffect(() => {
    const run = ++latest.current;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => run === latest.current && setState({ data, error: undefined, loading: false }),
      (error: unknown) => run === latest.current && setState((p) => ({ ...p, error, loading: false })),
    );
  }, [...keys, round]);
  const reload = useCallback(() => setRound((r) => r + 1), []);
  return { ...state, reload };
}

export function describeError(error: unknown): string {
  if (error instanceof ApiError) return error.describe();
  if (error instanceof Error) return error.message;
  return String(error);
}

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <p class="note error" role="alert">
      {describeError(error)}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function PageTitle({ title, children }: { title: string; children?: ComponentChildren }) {
  useEffect(() => {
    document.title = `${title} · toolgate console`;
  }, [title]);
  return (
    <header class="page-head">
      <h1>{title}</h1>
      {children ? <div class="page-actions">{children}</div> : null}
    </header>
  );
}

const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** A moment as the reader's local time, with the exact ISO value on hover and for machines. */
export function When({ at }: { at: string | null | undefined }) {
  if (!at) return <span class="muted">—</span>;
  return (
    <time dateTime={at} title={at}>
      {dateTime.format(new Date(at))}
    </time>
  );
}

/** A button that asks once more before doing something that cannot be undone. */
export function ConfirmButton({
  label,
  confirm,
  onConfirm,
  class: className = 'danger',
}: {
  label: string;
  confirm: string;
  onConfirm: () => Promise<unknown>;
  class?: string;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  return (
    <span class="confirm">
      <button
        type="button"
        class={className}
        disabled={busy}
        onClick={async () => {
          if (!window.confirm(confirm)) return;
          setBusy(true);
          setError(undefined);
          try {
            await onConfirm();
          } catch (failure) {
            setError(failure);
          } finally {
            setBusy(false);
          }
        }}
      >
        {busy ? `${label}…` : label}
      </button>
      {error ? <span class="error-inline">{describeError(error)}</span> : null}
    </span>
  );
}

/** A chip for an outcome: `ok` in green, an error code in red. */
export function Outcome({ outcome }: { outcome: string }) {
  return <span class={`chip ${outcome === 'ok' ? 'ok' : 'bad'}`}>{outcome}</span>;
}
