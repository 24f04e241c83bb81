import { useState, type FormEvent } from 'react';
import type { OAuthClient, PlatformClient } from '@platform/client';
import { describeError } from '../api';
import { Modal } from '../components/dialog';
import { Notice } from '../components/ui';
import { NAME_MAX, redirectList } from './oauth-app-form';

/**
 * Changing an app's name and redirect URIs (`PATCH /v1/oauth_clients/{id}`); its type, scopes
 * and grants are fixed at registration. Only what changed is sent; the server's refusal (a URI it
 * does not accept, a missing scope) is shown in the dialog, which stays open.
 */
export function EditApp({
  client,
  app,
  onClose,
  onSaved,
}: {
  client: PlatformClient;
  app: OAuthClient;
  onClose: () => void;
  onSaved: (app: OAuthClient) => Promise<void>;
}) {
  const [name, setName] = useState(app.name);
  const [redirects, setRedirects] = useState(app.redirect_uris.join('\n'));
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const save = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    if (name.length > NAME_MAX)
      return setError(
        `The name is ${name.length} characters long; at most ${NAME_MAX} are allowed.`,
      );
    const uris = redirectList(redirects);
    const body = {
      ...(name !== app.name && { name }),
      ...(uris.join('\n') !== app.redirect_uris.join('\n') && { redirect_uris: uris }),
    };
    if (Object.keys(body).length === 0) return onClose();
    setBusy(true);
    try {
      await onSaved(await client.oauthClients.update({ params: { id: app.id }, body }));
    } catch (e) {
      setError(describeError(e));
      setBusy(false);
    }
  };

  return (
    <Modal title={`Edit “${app.name}”`} onClose={onClose}>
      <form onSubmit={(e) => void save(e)} className="stack">
        {error ? <Notice kind="error">{error}</Notice> : null}
        <EditAppFields
          name={name}
          onName={setName}
          redirects={redirects}
          onRedirects={setRedirects}
        />
        <p className="hint">
          Type, scopes and grant types are fixed: register a new app to change them.
        </p>
        <div className="actions">
          <button type="submit" className="primary" disabled={busy}>
            Save changes
          </button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </Modal>
  );
}

function EditAppFields({
  name,
  onName,
  redirects,
  onRedirects,
}: {
  name: string;
  onName: (name: string) => void;
  redirects: string;
  onRedirects: (redirects: string) => void;
}) {
  return (
    <>
      <div className="field">
        <label htmlFor="edit-app-name">Name</label>
        <input
          id="edit-app-name"
          required
          value={name}
          onChange={(e) => onName(e.target.value)}
          aria-describedby="edit-app-name-hint"
        />
        <span id="edit-app-name-hint" className="hint">
          Shown to users when they sign in to it; up to {NAME_MAX} characters.
        </span>
      </div>
      <div className="field">
        <label htmlFor="edit-app-redirects">Redirect URIs (one per line)</label>
        <textarea
          id="edit-app-redirects"
          rows={3}
          value={redirects}
          onChange={(e) => onRedirects(e.target.value)}
          aria-describedby="edit-app-redirects-hint"
        />
        <span id="edit-app-redirects-hint" className="hint">
          New URIs apply to the next sign-in; a sign-in under way with a removed URI has to start
          again. Users’ approvals and tokens stay.
        </span>
      </div>
    </>
  );
}
