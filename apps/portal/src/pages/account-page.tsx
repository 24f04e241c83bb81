import { useRef, useState, type FormEvent } from 'react';
import type { Member, PlatformClient } from '@platform/client';
import { describeError } from '../api';
import { Notice, PageHeading } from '../components/ui';
import { ChangeEmail, wrongCurrentPassword } from './account-email';
import { YourSessions } from './account-sessions';

/**
 * Who is signed in, changing one's own password or email (the current password is asked for),
 * and where one is signed in.
 */
export function AccountPage({ client, user }: { client: PlatformClient; user: Member }) {
  // A new password signs out every other browser: the list is read again after one.
  const [passwordChanges, setPasswordChanges] = useState(0);
  return (
    <>
      <PageHeading title="Account">Your account</PageHeading>
      <SignedInAs user={user} />
      <ChangePassword client={client} onChanged={() => setPasswordChanges((n) => n + 1)} />
      <ChangeEmail client={client} />
      <YourSessions key={passwordChanges} client={client} />
    </>
  );
}

function SignedInAs({ user }: { user: Member }) {
  return (
    <section aria-labelledby="who">
      <h2 id="who">Signed in as</h2>
      <dl className="facts">
        <div>
          <dt>Email</dt>
          <dd>{user.email}</dd>
        </div>
        <div>
          <dt>Name</dt>
          <dd>{user.name ?? '—'}</dd>
        </div>
        <div>
          <dt>Role</dt>
          <dd>{user.role}</dd>
        </div>
      </dl>
    </section>
  );
}

/** The form's fields and its submission: the new password twice, the current one checked. */
function usePasswordChange(client: PlatformClient, onChanged: () => void) {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [again, setAgain] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const currentField = useRef<HTMLInputElement>(null);

  const change = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setMessage(null);
    if (next !== again) {
      setError('The two new passwords are not the same.');
      return;
    }
    setBusy(true);
    try {
      await client.user.changePassword({
        body: { current_password: current, new_password: next },
      });
      setCurrent('');
      setNext('');
      setAgain('');
      setMessage('Password changed. Use the new one the next time you sign in.');
      onChanged();
    } catch (e) {
      if (wrongCurrentPassword(e)) {
        setError('Your current password is not right. Type it again.');
        setCurrent('');
        currentField.current?.focus();
      } else setError(describeError(e));
    } finally {
      setBusy(false);
    }
  };
  // Editing answers the error: a message about what was typed before must not outlive it.
  const edited =
    (set: (value: string) => void) =>
    (value: string): void => {
      set(value);
      setError(null);
    };
  return {
    current,
    setCurrent: edited(setCurrent),
    next,
    setNext: edited(setNext),
    again,
    setAgain: edited(setAgain),
    error,
    message,
    busy,
    currentField,
    change,
  };
}

function ChangePassword({ client, onChanged }: { client: PlatformClient; onChanged: () => void }) {
  const {
    current,
    setCurrent,
    next,
    setNext,
    again,
    setAgain,
    error,
    message,
    busy,
    currentField,
    change,
  } = usePasswordChange(client, onChanged);
  return (
    <section aria-labelledby="password">
      <h2 id="password">Change your password</h2>
      {error ? <Notice kind="error">{error}</Notice> : null}
      {message ? <Notice kind="success">{message}</Notice> : null}
      <form onSubmit={(e) => void change(e)} className="stack">
        <div className="field">
          <label htmlFor="current-password">Current password</label>
          <input
            id="current-password"
            ref={currentField}
            type="password"
            autoComplete="current-password"
            required
            value={current}
            onChange={(e) => setCurrent(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="new-password">New password</label>
          <input
            id="new-password"
            type="password"
            autoComplete="new-password"
            required
            minLength={12}
            maxLength={1024}
            value={next}
            onChange={(e) => setNext(e.target.value)}
            aria-describedby="new-password-hint"
          />
          <span id="new-password-hint" className="hint">
            12 to 1024 characters.
          </span>
        </div>
        <div className="field">
          <label htmlFor="new-password-again">New password again</label>
          <input
            id="new-password-again"
            type="password"
            autoComplete="new-password"
            required
            value={again}
            onChange={(e) => setAgain(e.target.value)}
          />
        </div>
        <button type="submit" disabled={busy}>
          Change password
        </button>
      </form>
    </section>
  );
}
