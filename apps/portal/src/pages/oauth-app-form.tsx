import { useState, type FormEvent } from 'react';
import type {
  OAuthClientGrantType,
  OAuthClientType,
  OAuthClientWithSecret,
  PlatformClient,
  Scope,
} from '@platform/client';
import { describeError } from '../api';
import { CheckboxGroup } from '../components/ui';

const GRANT_TYPES: readonly OAuthClientGrantType[] = [
  'authorization_code',
  'refresh_token',
  'client_credentials',
];

const GRANT_HINTS: Record<OAuthClientGrantType, string> = {
  authorization_code: 'users sign in and approve the app (PKCE)',
  refresh_token: 'the app renews access without the user (with authorization_code)',
  client_credentials: 'the app acts for your organization itself (confidential only)',
};

/** The API's limit on an app's name (the contract's `text(100)`). */
export const NAME_MAX = 100;

/** The redirect URIs textarea's lines as the API's list: trimmed, blank lines dropped. */
export const redirectList = (text: string) =>
  text
    .split('\n')
    .map((uri) => uri.trim())
    .filter(Boolean);

/** The registration form's fields; after registering, the type and grant types stay as chosen. */
function useAppForm() {
  const [name, setName] = useState('');
  const [type, setType] = useState<OAuthClientType>('confidential');
  const [redirects, setRedirects] = useState('');
  const [selected, setSelected] = useState<Set<Scope>>(new Set());
  const [grants, setGrants] = useState<Set<OAuthClientGrantType>>(
    new Set(['authorization_code', 'refresh_token']),
  );
  const chooseType = (next: OAuthClientType) => {
    setType(next);
    if (next === 'public') {
      const without = new Set(grants);
      without.delete('client_credentials');
      setGrants(without);
    }
  };
  const reset = () => {
    setName('');
    setRedirects('');
    setSelected(new Set());
  };
  return {
    name,
    setName,
    type,
    chooseType,
    redirects,
    setRedirects,
    selected,
    setSelected,
    grants,
    setGrants,
    reset,
  };
}

/** Registering an app; the client ID and any secret are shown by the page. */
export function RegisterApp({
  client,
  scopes,
  onError,
  onMessage,
  onRegistered,
}: {
  client: PlatformClient;
  scopes: Scope[];
  onError: (error: string | null) => void;
  onMessage: (message: string | null) => void;
  onRegistered: (app: OAuthClientWithSecret) => Promise<void>;
}) {
  const form = useAppForm();
  const [busy, setBusy] = useState(false);

  const register = async (event: FormEvent) => {
    event.preventDefault();
    onError(null);
    onMessage(null);
    if (form.name.length > NAME_MAX)
      return onError(
        `The name is ${form.name.length} characters long; at most ${NAME_MAX} are allowed.`,
      );
    if (form.selected.size === 0) return onError('Choose at least one scope.');
    if (form.grants.size === 0) return onError('Choose at least one grant type.');
    setBusy(true);
    try {
      const app = await client.oauthClients.create({
        body: {
          name: form.name,
          type: form.type,
          redirect_uris: redirectList(form.redirects),
          scopes: [...form.selected],
          grant_types: [...form.grants],
        },
      });
      form.reset();
      await onRegistered(app);
    } catch (e) {
      onError(describeError(e));
    } finally {
      setBusy(false);
    }
  };

  return <AppForm form={form} scopes={scopes} busy={busy} onSubmit={(e) => void register(e)} />;
}

function AppForm({
  form,
  scopes,
  busy,
  onSubmit,
}: {
  form: ReturnType<typeof useAppForm>;
  scopes: Scope[];
  busy: boolean;
  onSubmit: (event: FormEvent) => void;
}) {
  return (
    <section aria-labelledby="register-app">
      <h2 id="register-app">Register an app</h2>
      <form className="stack" onSubmit={(e) => onSubmit(e)}>
        <div className="field">
          <label htmlFor="app-name">Name</label>
          <input
            id="app-name"
            required
            value={form.name}
            onChange={(e) => form.setName(e.target.value)}
            aria-describedby="app-name-hint"
          />
          <span id="app-name-hint" className="hint">
            Shown to users when they sign in to it; up to {NAME_MAX} characters.
          </span>
        </div>
        <AppTypeField type={form.type} onChoose={form.chooseType} />
        <div className="field">
          <label htmlFor="app-redirects">Redirect URIs (one per line)</label>
          <textarea
            id="app-redirects"
            rows={3}
            value={form.redirects}
            onChange={(e) => form.setRedirects(e.target.value)}
            aria-describedby="app-redirects-hint"
          />
          <span id="app-redirects-hint" className="hint">
            Exact URIs: https, or http on localhost / 127.0.0.1. Needed for authorization_code.
          </span>
        </div>
        <CheckboxGroup
          legend="Scopes"
          options={scopes}
          selected={form.selected}
          onChange={form.setSelected}
        />
        <CheckboxGroup
          legend="Grant types"
          options={GRANT_TYPES}
          selected={form.grants}
          onChange={form.setGrants}
          describe={(grant) => GRANT_HINTS[grant]}
          disabled={(grant) => grant === 'client_credentials' && form.type === 'public'}
        />
        <button type="submit" disabled={busy}>
          Register app
        </button>
      </form>
    </section>
  );
}

function AppTypeField({
  type,
  onChoose,
}: {
  type: OAuthClientType;
  onChoose: (type: OAuthClientType) => void;
}) {
  return (
    <fieldset className="checkbox-group">
      <legend>Type</legend>
      <label className="inline">
        <input
          type="radio"
          name="app-type"
          checked={type === 'confidential'}
          onChange={() => onChoose('confidential')}
        />{' '}
        Confidential <span className="hint">a server that keeps a secret</span>
      </label>
      <label className="inline">
        <input
          type="radio"
          name="app-type"
          checked={type === 'public'}
          onChange={() => onChoose('public')}
        />{' '}
        Public <span className="hint">a browser or mobile app: PKCE, no secret</span>
      </label>
    </fieldset>
  );
}
