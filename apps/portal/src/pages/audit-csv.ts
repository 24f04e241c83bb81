import type { AuditEvent } from '@platform/client';

/** The most entries a CSV export reads (100 a request): enough for an investigation, not a dump. */
export const AUDIT_CSV_MAX_ROWS = 2000;

/**
 * A cell as a spreadsheet must read it: text that begins with `=`, `+`, `-`, `@`, a tab or a
 * carriage return gets a leading `'` (docs/exports.md, design/api.md: against CSV injection), then
 * RFC 4180 quoting when it holds `"`, `,` or a line break.
 */
export function csvCell(value: string): string {
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

export const AUDIT_CSV_COLUMNS = [
  'created_at',
  'action',
  'actor',
  'actor_type',
  'credential',
  'credential_id',
  'user_id',
  'ip',
  'target_type',
  'target_id',
  'changes',
] as const;

/** What the page knows about the people and credentials an entry names. */
export interface ActorNames {
  /** A member's name, else their email. */
  person: (userId: string | null) => string | null;
  email: (userId: string | null) => string | null;
  credential: (event: AuditEvent) => string | null;
}

/** A change in words for a cell: `role: developer → viewer; name: set to Gradebook`. */
export function changesText(changes: AuditEvent['changes'], show: (v: unknown) => string): string {
  if (!changes) return '';
  return Object.entries(changes)
    .map(([field, value]) =>
      Array.isArray(value) && value.length === 2
        ? `${field}: ${show(value[0])} → ${show(value[1])}`
        : `${field}: ${show(value)}`,
    )
    .join('; ');
}

/** The CSV text (header row, `\r\n` line ends) of `events`, every text cell neutralised. */
export function auditCsv(
  events: readonly AuditEvent[],
  names: ActorNames,
  show: (v: unknown) => string,
): string {
  const rows = events.map((event) => [
    event.created_at,
    event.action,
    names.person(event.actor.user_id) ?? '',
    event.actor.type,
    names.credential(event) ?? '',
    event.actor.credential_id ?? '',
    event.actor.user_id ?? '',
    event.actor.ip ?? '',
    event.target.type,
    event.target.id,
    changesText(event.changes, show),
  ]);
  return [AUDIT_CSV_COLUMNS as readonly string[], ...rows]
    .map((row) => row.map(csvCell).join(','))
    .join('\r\n')
    .concat('\r\n');
}

/** Hands `text` to the browser as a download named `name`. */
export function saveFile(name: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  URL.revokeObjectURL(url);
}
