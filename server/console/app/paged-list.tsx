import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { type Loaded, LoadedView, ScrollRegion, Table, type TableProps, useLoad } from './ui.tsx';

/**
 * A filtered list paged by cursor, as the call log, the audit trail and the connections show one:
 * a filter form (applied on submit, not per keystroke), the page of the applied filter, and
 * Newer/Older buttons walking a stack of cursors (the API pages backwards only).
 */

/** A filter's values by field name; '' is "any". */
type Values = Record<string, string>;

/** One field of the filter form. `datetime` is a `datetime-local` in the reader's zone. */
export type FilterField<F extends Values> = { name: keyof F & string; label: string } & (
  | { kind?: 'text'; placeholder?: string }
  | { kind: 'datetime' }
  | { kind: 'select'; any: string; options: { value: string; label: string }[] }
);

export interface PagedList<F extends Values, P> {
  draft: F;
  setDraft: (draft: F) => void;
  /** The filter of the page shown. */
  filter: F;
  /** Whether any field of that filter is set. */
  filtered: boolean;
  /** undefined: the newest page. */
  cursor: string | undefined;
  page: Loaded<P>;
  apply: () => void;
  newer: (() => void) | undefined;
  older: (() => void) | undefined;
}

/** `datetime-local` text (the reader's zone) → ISO with a zone, as the API wants it. */
export const toIso = (local: string) => (local ? new Date(local).toISOString() : '');

export function usePagedList<F extends Values, P extends { next_cursor?: string | undefined }>(
  initial: F | (() => F),
  load: (filter: F, cursor: string | undefined) => Promise<P>,
): PagedList<F, P> {
  const [draft, setDraft] = useState<F>(initial);
  const [filter, setFilter] = useState<F>(draft);
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors[cursors.length - 1];
  const page = useLoad(() => load(filter, cursor), [JSON.stringify(filter), cursor]);
  const next = page.data?.next_cursor;
  return {
    draft,
    setDraft,
    filter,
    filtered: Object.values(filter).some(Boolean),
    cursor,
    page,
    apply: () => {
      setCursors([]);
      // Trimmed when applied, not as typed: a space typed inside a value stays.
      setFilter(Object.fromEntries(Object.entries(draft).map(([k, v]) => [k, v.trim()])) as F);
      // Applying the filter shown again asks again (new rows may have come): one load either way.
      page.reload();
    },
    newer: cursors.length > 0 ? () => setCursors(cursors.slice(0, -1)) : undefined,
    older: next ? () => setCursors([...cursors, next]) : undefined,
  };
}

export function FilterForm<F extends Values, P>(props: {
  list: PagedList<F, P>;
  fields: FilterField<F>[];
  /** Prefix of the inputs' ids (`calls` → `calls-outcome`). */
  idPrefix: string;
  submit?: string;
  class?: string;
}) {
  const { list, fields, idPrefix } = props;
  const { draft, setDraft } = list;
  const set = (name: string, value: string) => setDraft({ ...draft, [name]: value });
  return (
    <form
      class={props.class ?? 'filters card'}
      onSubmit={(event) => {
        event.preventDefault();
        list.apply();
      }}
    >
      {fields.map((field) => {
        const id = `${idPrefix}-${field.name}`;
        return (
          <div class="field" key={field.name}>
            <label for={id}>{field.label}</label>
            {field.kind === 'select' ? (
              <select
                id={id}
                value={draft[field.name]}
                onChange={(e) => set(field.name, e.currentTarget.value)}
              >
                <option value="">{field.any}</option>
                {field.options.map((option) => (
                  <option key={option.value} value={option.value}>
                    {option.label}
                  </option>
                ))}
              </select>
            ) : (
              <input
                id={id}
                {...(field.kind === 'datetime'
                  ? { type: 'datetime-local', step: 1 }
                  : field.placeholder
                    ? { placeholder: field.placeholder }
                    : {})}
                value={draft[field.name]}
                onInput={(e) => set(field.name, e.currentTarget.value)}
              />
            )}
          </div>
        );
      })}
      <div class="field actions">
        <button type="submit" class="primary">
          {props.submit ?? 'Filter'}
        </button>
      </div>
    </form>
  );
}

/** The page: its error, "Loading…", "No … yet / matches", or the rows `children` draws. */
export function PagedRows<F extends Values, P>(props: {
  list: PagedList<F, P>;
  /** What the rows are, for "Loading calls…". */
  what: string;
  /** The table's name, for the region a keyboard scrolls it by. */
  label: string;
  /** "No call", "No event": followed by "matches these filters" or "yet". */
  none: string;
  isEmpty: (page: P) => boolean;
  children: (page: P) => ComponentChildren;
}) {
  const { page, filtered } = props.list;
  return (
    <LoadedView
      loaded={page}
      what={props.what}
      isEmpty={props.isEmpty}
      empty={
        <>
          {props.none} {filtered ? 'matches these filters' : 'yet'}.
        </>
      }
    >
      {(data) => <ScrollRegion label={props.label}>{props.children(data)}</ScrollRegion>}
    </LoadedView>
  );
}

/** The page as a table ({@link PagedRows}): "No …" when `items` of the page are none. */
export function PagedTable<F extends Values, P, I>(
  props: TableProps<I> & {
    list: PagedList<F, P>;
    what: string;
    none: string;
    items: (page: P) => readonly I[];
  },
) {
  const { list, what, none, items, ...table } = props;
  return (
    <PagedRows
      list={list}
      what={what}
      label={table.caption ?? what}
      none={none}
      isEmpty={(page) => items(page).length === 0}
    >
      {(page) => <Table {...table} items={items(page)} />}
    </PagedRows>
  );
}

export function Pager<F extends Values, P>(props: { list: PagedList<F, P>; newer?: string; older?: string }) {
  const { newer, older } = props.list;
  return (
    <div class="pager">
      <button type="button" disabled={!newer} onClick={newer}>
        {props.newer ?? 'Newer'}
      </button>
      <button type="button" disabled={!older} onClick={older}>
        {props.older ?? 'Older'}
      </button>
    </div>
  );
}
