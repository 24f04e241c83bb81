import { useCallback, useEffect, useState, type FormEvent } from 'react';
import type { Organization, PlatformClient } from '@platform/client';
import { classifyError, type Failure, formatDate } from '../api';
import { FailureNotice } from '../components/states';
import { Notice, PageHeading } from '../components/ui';
import { publishOrganizationName } from '../page-title';
import type { Abilities } from '../roles';

/**
 * The organization: its name (admins rename it), plan and rate limit with how much of the
 * current 60-second window is used. Plan and limit belong to the platform's operators. A failed
 * load or save is the shared error state (session ended, no access, rate limited with the wait,
 * API unreachable) with the way out: try again, or sign in again.
 */
export function OrganizationPage({
  client,
  abilities,
}: {
  client: PlatformClient;
  abilities: Abilities;
}) {
  const rename = abilities.can('organization:write');
  const [organization, setOrganization] = useState<Organization | null>(null);
  const [name, setName] = useState('');
  /** Reading the organization failed: retried by loading again. */
  const [loadFailure, setLoadFailure] = useState<Failure | null>(null);
  /** Saving the name failed: retried by saving again. */
  const [saveFailure, setSaveFailure] = useState<Failure | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    setLoadFailure(null);
    try {
      const current = await client.organization.retrieve();
      setOrganization(current);
      setName(current.name);
      publishOrganizationName(current.name);
    } catch (e) {
      setLoadFailure(classifyError(e));
    }
  }, [client]);
  useEffect(() => void load(), [load]);

  const save = async (event?: FormEvent) => {
    event?.preventDefault();
    setSaveFailure(null);
    setMessage(null);
    setBusy(true);
    try {
      const updated = await client.organization.update({ body: { name } });
      setOrganization(updated);
      publishOrganizationName(updated.name);
      setMessage('Name saved.');
    } catch (e) {
      setSaveFailure(classifyError(e));
    } finally {
      setBusy(false);
    }
  };

  const limit = organization?.rate_limit;
  return (
    <>
      <PageHeading>Organization</PageHeading>
      {loadFailure ? <FailureNotice failure={loadFailure} onRetry={() => void load()} /> : null}
      {saveFailure ? (
        <FailureNotice
          failure={saveFailure}
          // A refused name is not retried as is; a lost connection or a full minute is.
          onRetry={saveFailure.kind === 'other' ? undefined : () => void save()}
        />
      ) : null}
      {message ? <Notice kind="success">{message}</Notice> : null}
      {organization === null || !limit ? (
        loadFailure ? null : (
          <p>Loading…</p>
        )
      ) : (
        <>
          <NameSection
            organization={organization}
            rename={rename}
            name={name}
            onName={setName}
            busy={busy}
            onSave={(e) => void save(e)}
          />
          <PlanAndLimit organization={organization} limit={limit} onRefresh={() => void load()} />
        </>
      )}
    </>
  );
}

/** The name, a form for those who may rename the organization. */
function NameSection({
  organization,
  rename,
  name,
  onName,
  busy,
  onSave,
}: {
  organization: Organization;
  rename: boolean;
  name: string;
  onName: (name: string) => void;
  busy: boolean;
  onSave: (event: FormEvent) => void;
}) {
  return (
    <section aria-labelledby="org-name">
      <h2 id="org-name">Name</h2>
      {rename ? (
        <form onSubmit={onSave} className="stack">
          <div className="field">
            <label htmlFor="organization-name">Organization name</label>
            <input
              id="organization-name"
              required
              maxLength={200}
              value={name}
              onChange={(e) => onName(e.target.value)}
            />
          </div>
          <button type="submit" disabled={busy || name === organization.name}>
            Save name
          </button>
        </form>
      ) : (
        <p>{organization.name}</p>
      )}
      <p className="hint">
        Id <code>{organization.id}</code>, created {formatDate(organization.created_at)}.
      </p>
    </section>
  );
}

/** The plan and the rate limit's current window; both belong to the platform's operators. */
function PlanAndLimit({
  organization,
  limit,
  onRefresh,
}: {
  organization: Organization;
  limit: NonNullable<Organization['rate_limit']>;
  onRefresh: () => void;
}) {
  return (
    <section aria-labelledby="org-plan">
      <h2 id="org-plan">Plan and rate limit</h2>
      <dl className="facts">
        <div>
          <dt>Plan</dt>
          <dd>{organization.plan}</dd>
        </div>
        <div>
          <dt>Requests per minute</dt>
          <dd data-testid="limit">{limit.limit_per_minute}</dd>
        </div>
        <div>
          <dt>Used in the current window</dt>
          <dd data-testid="used">{limit.used}</dd>
        </div>
        <div>
          <dt>Remaining</dt>
          <dd data-testid="remaining">{limit.remaining}</dd>
        </div>
        <div>
          <dt>Window resets</dt>
          <dd>{formatTime(limit.resets_at)}</dd>
        </div>
      </dl>
      <p className="hint">
        The limit counts every token of the organization over a rolling 60 seconds (this page
        included). The plan and the limit are changed by the platform’s operators; ask them if you
        need more.
      </p>
      <button type="button" onClick={onRefresh}>
        Refresh usage
      </button>
    </section>
  );
}

function formatTime(value: string): string {
  return new Date(value).toLocaleTimeString(undefined, { timeStyle: 'medium' });
}
