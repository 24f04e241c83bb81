import type { Deprecated } from './model';

/** "since 2026-01-01; it stops working after 2027-01-01. Use X instead. Migration note: …" */
export function deprecationText(deprecated: Deprecated): string {
  return [
    deprecated.since ? `since ${deprecated.since}` : 'and will be removed',
    deprecated.sunset ? `; it stops working after ${deprecated.sunset}` : '',
    '.',
    deprecated.replacement ? ` Use ${deprecated.replacement} instead.` : '',
    deprecated.link ? ` Migration note: ${deprecated.link}` : '',
  ].join('');
}
