import { useCallback, useEffect, useRef, useState } from 'react';
import type { AuditEvent, Member, PageMeta, PlatformClient } from '@platform/client';
import { formatDate } from '../api';
import { TableWrap } from '../components/list';
import { PORTAL_CLIENT_ID } from '../session';
import type { ActorNames } from './audit-csv';

export const ACTOR_LABELS: Record<AuditEvent['actor']['type'], string> = {
  personal_access_token: 'Personal access token',
  oauth_access_token: 'OAuth access token',
  operator: 'Operator (CLI)',
  invitation: 'Invitation link',
  sign_in: 'Sign-in page',
  oauth_client: 'OAuth client',
};

/** A value of `changes` in words. */
export function show(value: unknown): string {
  if (value === null || value === undefined || value === '') return 'nothing';
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.length ? value.map(show).join(', ') : 'none';
  if (typeof value === 'object')
    return Object.entries(value as Record<string, unknown>)
      .map(([key, inner]) => `${key} ${show(inner)}`)
      .join(', ');
  return typeof value === 'number' || typeof value === 'boolean' ? String(value) : '—';
}

/** A long id, shortened for a cell (`oac_0000…P0RT`); the full one is in the row's details. */
export function shortId(id: string): string {
  return id.length > 16 ? `${id.slice(0, 8)}…${id.slice(-4)}` : id;
}

/** `changes` as before → after, one line a field (a new value alone when there is no before). */
export function Changes({ changes }: { changes: AuditEvent['changes'] }) {
  if (!changes || Object.keys(changes).length === 0) return <>—</>;
  return (
    <ul className="changes-list">
      {Object.entries(changes).map(([field, value]) => (
        <li key={field}>
          <span className="field-name">{field.replaceAll('_', ' ')}</span>{' '}
          {Array.isArray(value) && value.length === 2 ? (
            <>
              <span className="visually-hidden">changed from </span>
              <span className="before">{show(value[0])}</span> <span aria-hidden="true">→</span>
              <span className="visually-hidden"> to</span>{' '}
              <span className="after">{show(value[1])}</span>
            </>
          ) : (
            <>
              <span className="visually-hidden">set to </span>
              <span className="after">{show(value)}</span>
            </>
          )}
        </li>
      ))}
    </ul>
  );
}

const isTokenActor = (event: AuditEvent) => event.actor.type === 'personal_access_token';

export interface AuditNames extends ActorNames {
  /** The members, for the member filter. */
  members: readonly { value: string; label: string }[];
  /** Reads the names of the credentials `events` name that are not known yet. */
  resolve: (events: readonly AuditEvent[]) => Promise<void>;
}

/**
 * Names for the people (the organization's members, when the session may read them) and the
 * credentials (tokens and OAuth apps, read once each) the entries shown name. A credential that
 * is gone or not readable keeps its id.
 */
export function useActorNames(client: PlatformClient, events: AuditEvent[] | null): AuditNames {
  const [members, setMembers] = useState<Map<string, Member>>(new Map());
  const credentials = useRef(
    new Map<string, string | null>([[PORTAL_CLIENT_ID, 'Developer portal']]),
  );
  const [, setKnown] = useState(0);
  useEffect(() => {
    client.members.list({ per_page: 100 }).then(
      (result) => setMembers(new Map(result.data.map((m: Member) => [m.id, m]))),
      () => undefined,
    );
  }, [client]);
  const resolve = useCallback(
    async (shown: readonly AuditEvent[]) => {
      const wanted = new Map<string, AuditEvent>();
      for (const event of shown) {
        const id = event.actor.credential_id;
        if (id && !credentials.current.has(id)) wanted.set(id, event);
      }
      if (wanted.size === 0) return;
      const found = await Promise.all(
        [...wanted].map(([id, event]) =>
          (isTokenActor(event)
            ? client.personalAccessTokens.retrieve(id)
            : client.oauthClients.retrieve(id)
          ).then(
            (credential): [string, string | null] => [id, credential.name],
            (): [string, string | null] => [id, null],
          ),
        ),
      );
      for (const [id, name] of found) credentials.current.set(id, name);
      setKnown((n) => n + 1);
    },
    [client],
  );
  useEffect(() => void resolve(events ?? []), [resolve, events]);
  return {
    person: (userId) => {
      const member = userId ? members.get(userId) : undefined;
      return member ? (member.name ?? member.email) : null;
    },
    email: (userId) => (userId ? (members.get(userId)?.email ?? null) : null),
    credential: (event) =>
      event.actor.credential_id
        ? (credentials.current.get(event.actor.credential_id) ?? null)
        : null,
    members: [...members.values()].map((m) => ({
      value: m.id,
      label: m.name ? `${m.name} (${m.email})` : m.email,
    })),
    resolve,
  };
}

/** Who acted, in words: the person, then the token or app they used (or the kind of actor). */
function Actor({ event, names }: { event: AuditEvent; names: ActorNames }) {
  const { type, credential_id: credentialId, user_id: userId } = event.actor;
  const person = names.person(userId);
  const credential = names.credential(event);
  const kind = isTokenActor(event) ? 'token' : 'app';
  return (
    <>
      <span className="audit-person">
        {person ?? (userId ? <code>{shortId(userId)}</code> : ACTOR_LABELS[type])}
      </span>
      {credentialId ? (
        <span className="audit-via">
          with {kind} {credential ?? <code className="audit-id">{shortId(credentialId)}</code>}
        </span>
      ) : null}
    </>
  );
}

/** Every field of the entry, whole: ids, IP, the kind of actor. */
function EntryDetails({ event, names }: { event: AuditEvent; names: ActorNames }) {
  const facts: [string, string | null][] = [
    ['Entry', event.id],
    ['Actor type', ACTOR_LABELS[event.actor.type]],
    ['Credential', event.actor.credential_id],
    ['User', event.actor.user_id],
    ['Email', names.email(event.actor.user_id)],
    ['IP', event.actor.ip],
    ['Target', `${event.target.type} ${event.target.id}`],
  ];
  return (
    <details className="audit-detail">
      <summary>
        Details<span className="visually-hidden"> of entry {event.id}</span>
      </summary>
      <dl>
        {facts
          .filter(([, value]) => value)
          .map(([label, value]) => (
            <div key={label}>
              <dt>{label}</dt>
              <dd>
                <code>{value}</code>
              </dd>
            </div>
          ))}
      </dl>
    </details>
  );
}

/** One row an entry; on a narrow screen each row is a card (cells stack with their labels). */
export function AuditTable({
  events,
  names,
  meta,
}: {
  events: AuditEvent[];
  names: ActorNames;
  meta: PageMeta | null;
}) {
  return (
    <TableWrap label="Audit entry table">
      <table className="stacking audit-table">
        <caption className="visually-hidden">
          Audit entries, page {meta?.page ?? 1} of {meta?.total_pages ?? 1}
        </caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Action</th>
            <th scope="col">Actor</th>
            <th scope="col">Target</th>
            <th scope="col">Changes</th>
            <th scope="col">
              <span className="visually-hidden">Details</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {events.map((event) => (
            <tr key={event.id}>
              <td data-label="When">{formatDate(event.created_at)}</td>
              <th scope="row" className="nowrap" data-label="Action">
                <code>{event.action}</code>
              </th>
              <td data-label="Actor" className="audit-actor">
                <Actor event={event} names={names} />
              </td>
              <td data-label="Target">
                {event.target.type.replaceAll('_', ' ')}{' '}
                <code className="audit-id">{shortId(event.target.id)}</code>
              </td>
              <td className="changes" data-label="Changes">
                <Changes changes={event.changes} />
              </td>
              <td>
                <EntryDetails event={event} names={names} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}
