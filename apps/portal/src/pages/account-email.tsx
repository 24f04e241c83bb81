import { useState, type FormEvent } from 'react';
import { PlatformApiError, type PendingEmailChange, type PlatformClient } from '@platform/client';
import { describeError } from '../api';
import { Notice } from '../components/ui';

/** The server's refusal of the current password (a 400 naming `current_password`). */
export function wrongCurrentPassword(error: unknown): boolean {
  return (
    error instanceof PlatformApiError &&
    error.status === 400 &&
    (error.problem?.errors ?? []).some((e) => e.path === 'body.current_password')
  );
}

/** What the server did with the request: mailed the new address, or (no mail) answered the link. */
function Pending({ pending }: { pending: PendingEmailChange }) {
  if (pending.delivery === 'link' && pending.confirm_url) {
    return (
      <Notice kind="success">
        This server sends no mail, so nothing checks that {pending.email} is yours. Open{' '}
        <a href={pending.confirm_url}>the confirmation link</a> to make it your email.
      </Notice>
    );
  }
  return (
    <Notice kind="success">
      We sent a link to {pending.email}. Your email changes when you open it (within 24 hours);
      until then, sign in with the one you have.
    </Notice>
  );
}

/**
 * Changing one's email: the new address gets a link, and only opening it makes the change (the
 * current password is asked for, as for a new password).
 */
export function ChangeEmail({ client }: { client: PlatformClient }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState<PendingEmailChange | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setPending(null);
    setBusy(true);
    try {
      setPending(await client.user.changeEmail({ body: { email, current_password: password } }));
      setEmail('');
      setPassword('');
    } catch (e) {
      setError(
        wrongCurrentPassword(e)
          ? 'Your current password is not right. Type it again.'
          : describeError(e),
      );
      setPassword('');
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="email-change">
      <h2 id="email-change">Change your email</h2>
      {error ? <Notice kind="error">{error}</Notice> : null}
      {pending ? <Pending pending={pending} /> : null}
      <form onSubmit={(e) => void submit(e)} className="stack">
        <div className="field">
          <label htmlFor="new-email">New email</label>
          <input
            id="new-email"
            type="email"
            autoComplete="email"
            required
            maxLength={320}
            value={email}
            onChange={(e) => setEmail(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="email-current-password">Your password</label>
          <input
            id="email-current-password"
            type="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </div>
        <button type="submit" disabled={busy}>
          Send a confirmation link
        </button>
      </form>
    </section>
  );
}
