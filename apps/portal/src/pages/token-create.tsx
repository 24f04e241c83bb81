import { useId, useState, type FormEvent } from 'react';
import type { PersonalAccessTokenWithSecret, PlatformClient, Scope } from '@platform/client';
import { describeError } from '../api';
import { Modal } from '../components/dialog';
import { CheckboxGroup, Notice } from '../components/ui';

/** The API's limit on a token's name (the contract's `text(200)`). */
export const NAME_MAX = 200;

const EXPIRY_CHOICES = [
  { value: '7', label: '7 days' },
  { value: '30', label: '30 days' },
  { value: '90', label: '90 days' },
  { value: '365', label: '1 year' },
  { value: 'never', label: 'Never' },
] as const;

/** The API's own resources (everything but the organization's data), by what they are for. */
const INTEGRATION_RESOURCES = [
  'webhooks',
  'events',
  'tokens',
  'oauth_clients',
  'exports',
  'request_logs',
];
const ADMINISTRATION_RESOURCES = ['members', 'organization', 'audit_log'];

const resourceOf = (scope: Scope) => scope.slice(0, scope.indexOf(':'));
const isData = (scope: Scope) =>
  !INTEGRATION_RESOURCES.includes(resourceOf(scope)) &&
  !ADMINISTRATION_RESOURCES.includes(resourceOf(scope));

/** The custom choice's checkboxes, grouped (a group the role has nothing in is left out). */
const SCOPE_GROUPS: readonly { legend: string; has: (scope: Scope) => boolean }[] = [
  { legend: 'Organization data', has: isData },
  {
    legend: 'Integrations',
    has: (scope) => INTEGRATION_RESOURCES.includes(resourceOf(scope)),
  },
  {
    legend: 'Administration',
    has: (scope) => ADMINISTRATION_RESOURCES.includes(resourceOf(scope)),
  },
];

type PresetId = 'read' | 'read-write' | 'all' | 'custom';

/** The presets, each the scopes it picks out of those the member's role allows. */
const PRESETS: readonly {
  id: PresetId;
  label: string;
  hint: string;
  pick: (scopes: readonly Scope[]) => Scope[];
}[] = [
  {
    id: 'read',
    label: 'Read-only',
    hint: 'Reads everything your role may read; changes nothing.',
    pick: (scopes) => scopes.filter((s) => s.endsWith(':read')),
  },
  {
    id: 'read-write',
    label: 'Read and write data',
    hint: 'Reads and writes the organization’s data (students, courses, …); not its tokens, apps, webhooks, members or settings.',
    pick: (scopes) => scopes.filter(isData),
  },
  {
    id: 'all',
    label: 'Everything your role allows',
    hint: 'Every scope your role may hold, including managing tokens and webhooks.',
    pick: (scopes) => [...scopes],
  },
  {
    id: 'custom',
    label: 'Custom',
    hint: 'Choose the scopes one by one.',
    pick: () => [],
  },
];

/** Why the form cannot be sent as it is, or null. */
function invalidToken(name: string, selected: readonly Scope[]): string | null {
  if (name.length > NAME_MAX)
    return `The name is ${name.length} characters long; at most ${NAME_MAX} are allowed.`;
  if (selected.length === 0) return 'Choose at least one scope.';
  return null;
}

/** The expiry choice as the API's `expires_at`: that many days from now, or never. */
function expiresAt(expiry: string): string | null {
  return expiry === 'never'
    ? null
    : new Date(Date.now() + Number(expiry) * 86_400_000).toISOString();
}

/**
 * Creating a token, in a dialog: its name, its scopes (a preset, or custom checkboxes grouped by
 * what they are for) and expiry. The secret is shown by the page once the dialog has closed.
 */
export function CreateTokenDialog({
  client,
  scopes,
  onClose,
  onCreated,
}: {
  client: PlatformClient;
  /** The scopes the member's role (and the session) allow. */
  scopes: Scope[];
  onClose: () => void;
  onCreated: (token: PersonalAccessTokenWithSecret) => Promise<void>;
}) {
  const [name, setName] = useState('');
  const [preset, setPreset] = useState<PresetId>('read');
  const [custom, setCustom] = useState<Set<Scope>>(new Set());
  const [expiry, setExpiry] = useState<string>('90');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const chosen = PRESETS.find((p) => p.id === preset)!;
  const selected = preset === 'custom' ? [...custom] : chosen.pick(scopes);

  const create = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    const invalid = invalidToken(name, selected);
    if (invalid) {
      setError(invalid);
      return;
    }
    setBusy(true);
    try {
      const token = await client.personalAccessTokens.create({
        body: { name, scopes: selected, expires_at: expiresAt(expiry) },
      });
      await onCreated(token);
    } catch (e) {
      setError(describeError(e));
      setBusy(false);
    }
  };

  return (
    <Modal title="Create a token" onClose={onClose}>
      <form onSubmit={(e) => void create(e)} className="stack">
        {error ? <Notice kind="error">{error}</Notice> : null}
        <div className="field">
          <label htmlFor="token-name">Name</label>
          <input
            id="token-name"
            required
            value={name}
            onChange={(e) => setName(e.target.value)}
            aria-describedby="token-name-hint"
          />
          <span id="token-name-hint" className="hint">
            What it is for, e.g. “nightly SIS sync”; up to {NAME_MAX} characters.
          </span>
        </div>
        <ScopePresets scopes={scopes} preset={preset} onPreset={setPreset} />
        {preset === 'custom' ? (
          <CustomScopes scopes={scopes} selected={custom} onChange={setCustom} />
        ) : null}
        <ExpirySelect value={expiry} onChange={setExpiry} />
        <div className="actions">
          <button type="submit" className="primary" disabled={busy}>
            Create token
          </button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}

/** The presets as radio buttons, each with what it gives (and how many scopes, for this role). */
function ScopePresets({
  scopes,
  preset,
  onPreset,
}: {
  scopes: Scope[];
  preset: PresetId;
  onPreset: (preset: PresetId) => void;
}) {
  const id = useId();
  return (
    <fieldset className="checkbox-group presets">
      <legend>Scopes</legend>
      <ul>
        {PRESETS.map((p) => {
          const count = p.pick(scopes).length;
          // A preset that would give nothing to this role (a viewer writes no data) is not offered.
          if (p.id !== 'custom' && count === 0) return null;
          return (
            <li key={p.id}>
              <input
                type="radio"
                id={`${id}-${p.id}`}
                name={`${id}-preset`}
                value={p.id}
                checked={preset === p.id}
                onChange={() => onPreset(p.id)}
                aria-describedby={`${id}-${p.id}-hint`}
              />{' '}
              <label htmlFor={`${id}-${p.id}`}>{p.label}</label>
              <span id={`${id}-${p.id}-hint`} className="hint preset-hint">
                {p.hint}
                {p.id === 'custom' ? null : ` ${count} ${count === 1 ? 'scope' : 'scopes'}.`}
              </span>
            </li>
          );
        })}
      </ul>
    </fieldset>
  );
}

function CustomScopes({
  scopes,
  selected,
  onChange,
}: {
  scopes: Scope[];
  selected: ReadonlySet<Scope>;
  onChange: (next: Set<Scope>) => void;
}) {
  return (
    <>
      {SCOPE_GROUPS.map((group) => {
        const options = scopes.filter(group.has);
        if (options.length === 0) return null;
        return (
          <CheckboxGroup
            key={group.legend}
            legend={group.legend}
            options={options}
            selected={selected}
            onChange={onChange}
          />
        );
      })}
    </>
  );
}

function ExpirySelect({ value, onChange }: { value: string; onChange: (value: string) => void }) {
  return (
    <div className="field">
      <label htmlFor="token-expiry">Expires</label>
      <select id="token-expiry" value={value} onChange={(e) => onChange(e.target.value)}>
        {EXPIRY_CHOICES.map((c) => (
          <option key={c.value} value={c.value}>
            {c.label}
          </option>
        ))}
      </select>
    </div>
  );
}
