import type { ComponentChildren, TargetedEvent } from 'preact';
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

/**
 * What a page shows of a load (useLoad): its error; "Loading …" until the first answer; `empty`
 * (a <p class="empty">) when `isEmpty` says the answer holds nothing; else what `children` draws
 * of it. A reload keeps the answer shown meanwhile.
 */
export function LoadedView<T>(props: {
  loaded: Loaded<T>;
  /** What is loading, for "Loading apps…". */
  what: string;
  isEmpty?: (data: T) => boolean;
  empty?: ComponentChildren;
  children: (data: T) => ComponentChildren;
}) {
  const { data, error, loading } = props.loaded;
  return (
    <>
      <ErrorNote error={error} />
      {data === undefined ? (
        loading ? (
          <Loading what={props.what} />
        ) : null
      ) : props.isEmpty?.(data) ? (
        <p class="empty">{props.empty}</p>
      ) : (
        props.children(data)
      )}
    </>
  );
}

/** A table's look: a caption for screen readers (the page's heading names the list already), its column heads. */
export interface TableProps<I> {
  caption?: string;
  class?: string;
  /** Set while newer rows are being loaded in place of these. */
  busy?: boolean;
  head: ComponentChildren;
  /** One row (a <tr> with its key) of an item. */
  row: (item: I) => ComponentChildren;
}

/** A table as the lists draw one: `items`, a row each. */
export function Table<I>(props: TableProps<I> & { items: readonly I[] }) {
  return (
    <table class={props.class} aria-busy={props.busy}>
      {props.caption ? <caption class="sr-only">{props.caption}</caption> : null}
      <thead>
        <tr>{props.head}</tr>
      </thead>
      <tbody>{props.items.map((item) => props.row(item))}</tbody>
    </table>
  );
}

/**
 * What may be wider (or taller) than its room, a table on a phone: it scrolls, and while it does it
 * is a named region that takes the focus, so that a keyboard can scroll it too (WCAG 2.1.1); when
 * it fits it is a plain box, not one more Tab stop.
 */
export function ScrollRegion({
  label,
  class: className = 'table-wrap',
  children,
}: {
  label: string;
  class?: string;
  children: ComponentChildren;
}) {
  const box = useRef<HTMLDivElement>(null);
  const [scrolls, setScrolls] = useState(false);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const measure = () =>
      setScrolls(element.scrollWidth > element.clientWidth || element.scrollHeight > element.clientHeight);
    measure();
    // The box changes size with the window; its content with each answer drawn in it.
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    for (const child of Array.from(element.children)) observer.observe(child);
    return () => observer.disconnect();
  }, [children]);
  return (
    <div
      ref={box}
      class={className}
      {...(scrolls ? { role: 'region', 'aria-label': `${label}, scrollable`, tabIndex: 0 } : {})}
    >
      {children}
    </div>
  );
}

/**
 * A list loaded whole (useLoad) as a table ({@link LoadedView}): `empty` when `items` of the answer
 * are none.
 */
export function LoadedTable<T, I>(
  props: TableProps<I> & {
    loaded: Loaded<T>;
    what: string;
    items: (data: T) => readonly I[];
    empty: ComponentChildren;
  },
) {
  const { loaded, what, items, empty, ...table } = props;
  return (
    <LoadedView loaded={loaded} what={what} isEmpty={(data) => items(data).length === 0} empty={empty}>
      {(data) => (
        <ScrollRegion label={table.caption ?? what}>
          <Table {...table} items={items(data)} />
        </ScrollRegion>
      )}
    </LoadedView>
  );
}

/** Binds a text field to a piece of state: its value, and each keystroke written back. */
export function bound(value: string, set: (value: string) => void) {
  return {
    value,
    onInput: (event: TargetedEvent<HTMLInputElement>) => set(event.currentTarget.value),
  };
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
