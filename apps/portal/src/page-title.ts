import { useEffect, useSyncExternalStore } from 'react';

/**
 * The organization's name, shared by the header and the tab title: the app publishes it when it
 * loads the organization, the Organization page when it renames it, so both change at once.
 */
let organizationName: string | null = null;
const listeners = new Set<() => void>();

export function publishOrganizationName(name: string | null): void {
  if (name === organizationName) return;
  organizationName = name;
  applyTitle();
  for (const listener of listeners) listener();
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** The organization's name as last published (null before it is known or without organization:read). */
export function useOrganizationName(): string | null {
  return useSyncExternalStore(subscribe, () => organizationName);
}

let pageTitle = '';

function applyTitle(): void {
  document.title = [pageTitle, organizationName, 'Platform'].filter(Boolean).join(' · ');
}

/**
 * The tab's title for the page shown: "Tokens · Riverside School · Platform", so tabs, history
 * and screen readers tell pages apart. `title` may be read at each render (a heading's text).
 */
export function usePageTitle(title: string | (() => string)): void {
  useEffect(() => {
    const next = typeof title === 'function' ? title() : title;
    if (next === pageTitle) return;
    pageTitle = next;
    applyTitle();
  });
}
