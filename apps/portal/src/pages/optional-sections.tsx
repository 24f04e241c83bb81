import { useEffect, useState } from 'react';
import type { PlatformClient } from '@platform/client';
import { describeError } from '../api';
import { Notice, PageHeading } from '../components/ui';

/**
 * Sections whose API is being added (issue 15: members and invitations, the audit log, the
 * organization). Each appears in the navigation only when the SDK has its namespace and the
 * API answers the probe for the signed-in member, so the portal works against servers with and
 * without them. The generic view below shows what the API returns; replace it with a page of
 * its own (as for tokens) once the operations are in the SDK.
 */
export interface OptionalSection {
  path: string;
  label: string;
  namespace: string;
  method: 'list' | 'retrieve';
}

export const OPTIONAL_SECTIONS: readonly OptionalSection[] = [
  { path: '/organization', label: 'Organization', namespace: 'organization', method: 'retrieve' },
  { path: '/members', label: 'Members', namespace: 'members', method: 'list' },
  { path: '/audit-log', label: 'Audit log', namespace: 'auditLog', method: 'list' },
];

type Call = (args?: unknown) => Promise<unknown>;

/** The SDK method of a section, if this SDK build has it. */
function callOf(client: PlatformClient, section: OptionalSection): Call | undefined {
  const namespace = (client as unknown as Record<string, Record<string, Call> | undefined>)[
    section.namespace
  ];
  const method = namespace?.[section.method];
  return typeof method === 'function' ? method.bind(namespace) : undefined;
}

/** The sections the API answers for this member (a 403 or 404 hides one). */
export async function availableSections(client: PlatformClient): Promise<OptionalSection[]> {
  const checks = await Promise.all(
    OPTIONAL_SECTIONS.map(async (section) => {
      const call = callOf(client, section);
      if (!call) return null;
      try {
        await call(section.method === 'list' ? { per_page: 1 } : undefined);
        return section;
      } catch {
        return null;
      }
    }),
  );
  return checks.filter((s): s is OptionalSection => s !== null);
}

function Value({ value }: { value: unknown }) {
  if (value === null || value === undefined) return <>—</>;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')
    return <>{String(value)}</>;
  return <code>{JSON.stringify(value)}</code>;
}

export function OptionalSectionPage({
  client,
  section,
}: {
  client: PlatformClient;
  section: OptionalSection;
}) {
  const [data, setData] = useState<Record<string, unknown>[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const call = callOf(client, section);
    if (!call) return setError('This server’s SDK does not offer this section yet.');
    call(section.method === 'list' ? { per_page: 100 } : undefined).then(
      (result) => {
        const body = result as { data?: Record<string, unknown>[] } & Record<string, unknown>;
        setData(section.method === 'list' ? (body.data ?? []) : [body]);
      },
      (e: unknown) => setError(describeError(e)),
    );
  }, [client, section]);
  const columns = data?.[0] ? Object.keys(data[0]).filter((k) => k !== 'object') : [];
  return (
    <>
      <PageHeading>{section.label}</PageHeading>
      {error ? <Notice kind="error">{error}</Notice> : null}
      {data === null ? (
        error ? null : (
          <p>Loading…</p>
        )
      ) : data.length === 0 ? (
        <p>Nothing here yet.</p>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                {columns.map((c) => (
                  <th key={c} scope="col">
                    {c.replace(/_/g, ' ')}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {data.map((row, i) => (
                <tr key={typeof row.id === 'string' ? row.id : i}>
                  {columns.map((c) => (
                    <td key={c}>
                      <Value value={row[c]} />
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
