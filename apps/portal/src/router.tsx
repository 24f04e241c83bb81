import { useEffect, useState, type MouseEvent, type ReactNode } from 'react';
import { PORTAL_BASE } from './session';

/**
 * The portal's routes are a handful of paths under /portal (the server answers every one with
 * index.html); a router library would be more code than this.
 */
export function usePath(): string {
  const [path, setPath] = useState(() => location.pathname);
  useEffect(() => {
    const onPop = () => setPath(location.pathname);
    addEventListener('popstate', onPop);
    addEventListener('portal:navigate', onPop);
    return () => {
      removeEventListener('popstate', onPop);
      removeEventListener('portal:navigate', onPop);
    };
  }, []);
  return path.startsWith(PORTAL_BASE) ? path.slice(PORTAL_BASE.length) || '/' : '/';
}

/** The query string of the current URL, live: list pages keep their page, search and filters here. */
export function useSearch(): URLSearchParams {
  const [search, setSearch] = useState(() => location.search);
  useEffect(() => {
    const onChange = () => setSearch(location.search);
    addEventListener('popstate', onChange);
    addEventListener('portal:navigate', onChange);
    return () => {
      removeEventListener('popstate', onChange);
      removeEventListener('portal:navigate', onChange);
    };
  }, []);
  return new URLSearchParams(search);
}

/** Replaces the query string (a new history entry, so Back returns to the previous page of a list). */
export function setSearch(params: URLSearchParams): void {
  const query = params.toString();
  history.pushState(null, '', `${location.pathname}${query ? `?${query}` : ''}`);
  dispatchEvent(new Event('portal:navigate'));
}

let moved = false;

/** Whether the user has moved within the app (a first load leaves focus where the browser puts it). */
export function navigatedInApp(): boolean {
  return moved;
}

/** `to` is relative to /portal, e.g. `/webhooks`. */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  moved = true;
  const url = to.startsWith(PORTAL_BASE) ? to : `${PORTAL_BASE}${to}`;
  if (options.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  dispatchEvent(new Event('portal:navigate'));
}

export function Link({
  to,
  children,
  current,
}: {
  to: string;
  children: ReactNode;
  current?: boolean;
}) {
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    // New tab, new window and the like stay the browser's.
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey)
      return;
    event.preventDefault();
    navigate(to);
  };
  return (
    <a href={`${PORTAL_BASE}${to}`} onClick={onClick} aria-current={current ? 'page' : undefined}>
      {children}
    </a>
  );
}
