import {
  Fragment,
  useCallback,
  useEffect,
  useLayoutEffect,
  useRef,
  useState,
  type ReactNode,
} from 'react';
import type { PageMeta } from '@platform/client';
import { classifyError, type Failure } from '../api';
import { setSearch, useSearch } from '../router';

export interface ListQuery {
  page: number;
  per_page: number;
  [filter: string]: string | number;
}

export interface ListState<T> {
  rows: T[] | null;
  meta: PageMeta | null;
  failure: Failure | null;
  page: number;
  /** The filter values in the URL (only those set). */
  filters: Record<string, string>;
  reload: () => Promise<void>;
  /** Changes filters (and goes back to page 1) or the page, in the URL. */
  update: (changes: Record<string, string | number | null>) => void;
}

/**
 * One page of a collection, fetched from the API (its page, per_page and filters), with the page
 * and filters kept in the URL's query (under `prefix` when a screen has two lists), so a reload,
 * a shared link or Back shows the same rows.
 */
export function useListPage<T>(
  fetchPage: (query: ListQuery) => Promise<{ data: T[]; meta: PageMeta }>,
  {
    prefix = '',
    filters = [],
    perPage = 25,
  }: { prefix?: string; filters?: readonly string[]; perPage?: number } = {},
): ListState<T> {
  const search = useSearch();
  const raw = Number(search.get(`${prefix}page`) ?? '1');
  const page = Number.isInteger(raw) && raw >= 1 ? raw : 1;
  const filterKey = JSON.stringify(
    Object.fromEntries(
      filters.flatMap((f) => {
        const value = search.get(`${prefix}${f}`);
        return value ? [[f, value]] : [];
      }),
    ),
  );
  const [result, setResult] = useState<{ rows: T[]; meta: PageMeta } | null>(null);
  const [failure, setFailure] = useState<Failure | null>(null);
  const latest = useRef(0);

  const update = useCallback(
    (changes: Record<string, string | number | null>) => {
      const next = new URLSearchParams(location.search);
      for (const [key, value] of Object.entries(changes)) {
        if (value === null || value === '' || (key === 'page' && value === 1))
          next.delete(`${prefix}${key}`);
        else next.set(`${prefix}${key}`, String(value));
      }
      if (!('page' in changes)) next.delete(`${prefix}page`);
      setSearch(next);
    },
    [prefix],
  );

  const reload = useCallback(async () => {
    const call = ++latest.current;
    setFailure(null);
    try {
      const found = await fetchPage({
        page,
        per_page: perPage,
        ...(JSON.parse(filterKey) as Record<string, string>),
      });
      if (call !== latest.current) return;
      // Past the end (the last row of the last page was removed): show the new last page.
      if (found.data.length === 0 && page > 1 && found.meta.total_pages >= 1) {
        update({ page: found.meta.total_pages });
        return;
      }
      setResult({ rows: found.data, meta: found.meta });
    } catch (e) {
      if (call === latest.current) setFailure(classifyError(e));
    }
  }, [fetchPage, page, perPage, filterKey, update]);
  useEffect(() => void reload(), [reload]);

  return {
    rows: result?.rows ?? null,
    meta: result?.meta ?? null,
    failure,
    page,
    filters: JSON.parse(filterKey) as Record<string, string>,
    reload,
    update,
  };
}

/** "Showing 26–50 of 105 tokens" with previous and next page buttons. */
export function Pager({
  meta,
  noun,
  label,
  onPage,
}: {
  meta: PageMeta;
  /** Plural, e.g. "tokens". */
  noun: string;
  /** Names the navigation landmark, e.g. "Token pages". */
  label: string;
  onPage: (page: number) => void;
}) {
  const from = meta.total === 0 ? 0 : (meta.page - 1) * meta.per_page + 1;
  const to = Math.min(meta.total, meta.page * meta.per_page);
  const pages = Math.max(1, meta.total_pages);
  // Past the server's counting bound the total is a lower bound: say so.
  const total = `${meta.total}${meta.total_exact ? '' : '+'}`;
  return (
    <nav aria-label={label} className="pager">
      <p className="count" aria-live="polite">
        {meta.total === 0
          ? ''
          : from === 1 && to === meta.total
            ? `${total} of ${total} ${noun}`
            : `Showing ${from}–${to} of ${total} ${noun}`}
      </p>
      {pages > 1 ? (
        <div className="pager-buttons">
          <button type="button" disabled={meta.page <= 1} onClick={() => onPage(meta.page - 1)}>
            Previous page
          </button>
          <span>
            Page {Math.min(meta.page, pages)} of {pages}
          </span>
          <button type="button" disabled={meta.page >= pages} onClick={() => onPage(meta.page + 1)}>
            Next page
          </button>
        </div>
      ) : null}
    </nav>
  );
}

/**
 * A table in a named region that takes focus. On a wide screen it is a table (scrolling sideways
 * inside the region if it must); on a narrow one (`layout="cards"`, the default) each row becomes
 * a card: every cell on its own line after its column's name, the row's actions (the cells of a
 * column whose header is visually hidden) together at the bottom, so nothing scrolls sideways.
 * The column names come from the table's `thead` (a cell's own `data-label` wins), so a page gets
 * this by rendering an ordinary table. `layout="scroll"` keeps the table scrolling sideways
 * (wide numeric tables where a card per row would not help).
 */
export function TableWrap({
  label,
  children,
  layout = 'cards',
}: {
  label: string;
  children: ReactNode;
  layout?: 'cards' | 'scroll';
}) {
  const ref = useRef<HTMLDivElement>(null);
  useLayoutEffect(() => {
    const wrap = ref.current;
    if (!wrap || layout !== 'cards') return;
    labelCells(wrap);
    // Rows come and go (paging, reloads) without this component rendering again.
    const observer = new MutationObserver(() => labelCells(wrap));
    observer.observe(wrap, { childList: true, subtree: true, characterData: true });
    return () => observer.disconnect();
  }, [layout]);
  return (
    <div
      ref={ref}
      className={layout === 'cards' ? 'table-wrap table-cards' : 'table-wrap'}
      role="region"
      aria-label={label}
      tabIndex={0}
    >
      {children}
    </div>
  );
}

/** An element's text as seen (without visually hidden parts). */
function visibleText(node: Node): string {
  if (node instanceof HTMLElement && node.classList.contains('visually-hidden')) return '';
  if (node.nodeType === Node.TEXT_NODE) return node.textContent ?? '';
  return [...node.childNodes].map(visibleText).join('');
}

/**
 * Gives each body cell its column's name (`data-label`, shown before it in a card) and marks the
 * cells of a column without a visible name (the row's actions) `data-actions`. A row header
 * (`th scope="row"`) is the card's title and gets no name. Cells the page labelled stay as they are.
 */
function labelCells(wrap: HTMLElement): void {
  for (const table of wrap.querySelectorAll('table')) {
    const head = table.tHead?.rows[table.tHead.rows.length - 1];
    if (!head) continue;
    const columns: string[] = [];
    for (const th of head.cells)
      for (let i = 0; i < th.colSpan; i++) columns.push(visibleText(th).trim());
    for (const body of table.tBodies)
      for (const row of body.rows) {
        let column = 0;
        for (const cell of row.cells) {
          const name = columns[column] ?? '';
          column += cell.colSpan;
          if (cell.hasAttribute('data-label') && !cell.hasAttribute('data-auto-label')) continue;
          if (cell.tagName === 'TH' && cell.scope === 'row') continue;
          if (name === '') {
            if (!cell.hasAttribute('data-actions')) cell.setAttribute('data-actions', '');
            continue;
          }
          if (cell.getAttribute('data-label') !== name) {
            cell.setAttribute('data-label', name);
            cell.setAttribute('data-auto-label', '');
          }
        }
      }
  }
}

/**
 * A long id, path or address with line-break opportunities at its sensible points (after `/`,
 * `_`, `.`, `-`, `?`, `&`, `=`), so on a narrow screen it wraps between its parts instead of in
 * the middle of one (`GET /v1/webhook_endpoints/:id` never as `webhook_end` + `points`). Copying
 * it gives the text unchanged.
 */
export function Breakable({ text }: { text: string }) {
  const parts = text.split(/(?<=[/_.?&=-])/);
  return (
    <>
      {parts.map((part, i) => (
        <Fragment key={i}>
          {i > 0 ? <wbr /> : null}
          {part}
        </Fragment>
      ))}
    </>
  );
}

/** How long the search box waits after the last keystroke before it asks the API. */
export const SEARCH_DEBOUNCE_MS = 300;

/**
 * A labelled search box over a list: what is typed goes to the URL as `q` (under the list's
 * prefix) once typing pauses, which sends the list back to page 1; a cleared box removes it.
 * Back and Forward put the URL's value back in the box.
 */
export function SearchBox({
  id,
  label,
  value,
  onSearch,
}: {
  id: string;
  /** The visible label, e.g. "Search tokens". */
  label: string;
  /** The `q` in the URL ('' when none). */
  value: string;
  onSearch: (q: string | null) => void;
}) {
  const [text, setText] = useState(value);
  const latest = useRef({ value, onSearch });
  latest.current = { value, onSearch };
  // The URL changed under the box (Back, a link): show what it says.
  useEffect(() => setText(value), [value]);
  useEffect(() => {
    const q = text.trim();
    if (q === latest.current.value) return;
    const timer = setTimeout(
      () => latest.current.onSearch(q === '' ? null : q),
      SEARCH_DEBOUNCE_MS,
    );
    return () => clearTimeout(timer);
  }, [text]);
  return (
    <div className="field filter" role="search" aria-label={label}>
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type="search"
        value={text}
        maxLength={200}
        autoComplete="off"
        onChange={(e) => setText(e.target.value)}
      />
    </div>
  );
}

/** One choice of a `FilterSelect`: a value, and what the menu shows for it (the value itself if unset). */
export type FilterChoice = string | { value: string; label: string };

/**
 * A labelled menu that filters a list: the chosen value goes to the URL (`onChange(null)` for the
 * empty choice, which removes it). `all` is the empty choice's text, when the choices lack one.
 */
export function FilterSelect({
  id,
  label,
  value,
  onChange,
  all,
  choices,
}: {
  id: string;
  label: string;
  value: string;
  onChange: (value: string | null) => void;
  all?: string;
  choices: readonly FilterChoice[];
}) {
  return (
    <div className="field filter">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value || null)}>
        {all === undefined ? null : <option value="">{all}</option>}
        {choices.map((choice) => {
          const { value: v, label: text } =
            typeof choice === 'string' ? { value: choice, label: choice } : choice;
          return (
            <option key={v} value={v}>
              {text}
            </option>
          );
        })}
      </select>
    </div>
  );
}

/** What an empty list says: nothing yet, or nothing matching the search or filters. */
export function emptyListText(noun: string, q: string | undefined, filtered = false): string {
  if (q) return `No ${noun} match “${q}”.`;
  return filtered ? `No ${noun} match these filters.` : `No ${noun} yet.`;
}
