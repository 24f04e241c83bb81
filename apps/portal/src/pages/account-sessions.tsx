import { useCallback, useEffect, useState } from 'react';
import type { PlatformClient, UserSession } from '@platform/client';
import { describeError, formatDate } from '../api';
import { useConfirm } from '../components/dialog';
import { TableWrap } from '../components/list';
import { Notice } from '../components/ui';

const BROWSERS: [RegExp, string][] = [
  [/Edg\//, 'Edge'],
  [/Firefox\//, 'Firefox'],
  [/Chrom(e|ium)\//, 'Chrome'],
  [/Safari\//, 'Safari'],
];
const SYSTEMS: [RegExp, string][] = [
  [/Android/, 'Android'],
  [/iPhone|iPad/, 'iOS'],
  [/Windows/, 'Windows'],
  [/Mac OS X|Macintosh/, 'macOS'],
  [/Linux/, 'Linux'],
];

/**
 * "Firefox on Linux" from a User-Agent: the names a person recognises their devices by. A few
 * patterns suffice for that (the full string is the cell's title); a parsing library would
 * weigh more than the page it labels.
 */
export function deviceName(userAgent: string | null): string {
  if (!userAgent) return 'Unknown device';
  const browser = BROWSERS.find(([pattern]) => pattern.test(userAgent))?.[1];
  const system = SYSTEMS.find(([pattern]) => pattern.test(userAgent))?.[1];
  if (browser && system) return `${browser} on ${system}`;
  return browser ?? system ?? userAgent.slice(0, 60);
}

function sessionName(session: UserSession): string {
  return session.type === 'app' ? (session.app?.name ?? 'An app') : deviceName(session.device);
}

function signOutConfirmation(session: UserSession) {
  return session.type === 'app'
    ? {
        title: 'Withdraw this app’s access?',
        body: (
          <p>
            <strong className="name">{sessionName(session)}</strong> stops acting for you at once:
            every token it holds for you stops working, and it must ask you again.
          </p>
        ),
        confirm: 'Withdraw access',
      }
    : {
        title: 'Sign out this browser?',
        body: (
          <p>
            <strong className="name">{sessionName(session)}</strong> is signed out at once and must
            sign in again with your password.
          </p>
        ),
        confirm: 'Sign out',
      };
}

/** The member's sessions and what changing them says; `run` does one change and reloads. */
function useSessions(client: PlatformClient) {
  const [sessions, setSessions] = useState<UserSession[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const load = useCallback(async () => {
    try {
      setSessions((await client.user.listSessions()).data);
    } catch (e) {
      setError(describeError(e));
    }
  }, [client]);
  useEffect(() => void load(), [load]);
  // The list is read again before the outcome is said, so what the message says is on screen.
  const run = async (change: () => Promise<string>) => {
    setError(null);
    setMessage(null);
    let said: string | null = null;
    try {
      said = await change();
    } catch (e) {
      setError(describeError(e));
    }
    await load();
    setMessage(said);
  };
  return { sessions, error, message, run };
}

/**
 * Where the member is signed in and which apps act for them (GitHub's and Google's "your
 * devices"): sign out any one, or every other browser at once.
 */
export function YourSessions({ client }: { client: PlatformClient }) {
  const { sessions, error, message, run } = useSessions(client);
  const [confirm, dialog] = useConfirm();
  const signOut = async (session: UserSession) => {
    if (!(await confirm(signOutConfirmation(session)))) return;
    await run(async () => {
      await client.user.revokeSession({ params: { id: session.id } });
      return session.type === 'app'
        ? `${sessionName(session)} no longer acts for you.`
        : `${sessionName(session)} is signed out.`;
    });
  };
  const othersSignedIn = (sessions ?? []).some((s) => s.type === 'browser' && !s.current);
  const signOutOthers = () =>
    run(async () => {
      const { data } = await client.user.signOutOtherSessions();
      const left = data.filter((s) => s.type === 'browser').length;
      return left ? 'Every other browser is signed out.' : 'Every browser is signed out.';
    });
  return (
    <section aria-labelledby="sessions">
      {dialog}
      <h2 id="sessions">Where you’re signed in</h2>
      <p>
        Browsers signed in to your account and apps you allowed to act for you, with where they were
        last used from. Sign out anything you don’t recognise, then change your password.
      </p>
      {error ? <Notice kind="error">{error}</Notice> : null}
      {message ? <Notice kind="success">{message}</Notice> : null}
      {sessions ? <SessionTable sessions={sessions} onSignOut={(s) => void signOut(s)} /> : null}
      {othersSignedIn ? (
        <p>
          <button type="button" onClick={() => void signOutOthers()}>
            Sign out every other browser
          </button>
        </p>
      ) : null}
    </section>
  );
}

function SessionTable({
  sessions,
  onSignOut,
}: {
  sessions: UserSession[];
  onSignOut: (session: UserSession) => void;
}) {
  return (
    <TableWrap label="Your sessions">
      <table>
        <thead>
          <tr>
            <th scope="col">Device or app</th>
            <th scope="col">IP address</th>
            <th scope="col">Last active</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {sessions.map((session) => (
            <tr key={session.id}>
              <th scope="row" title={session.device ?? undefined}>
                {sessionName(session)}
                {session.current ? (
                  <>
                    {' '}
                    <span className="badge">This {session.type}</span>
                  </>
                ) : null}
              </th>
              <td>{session.ip ?? '—'}</td>
              <td>{session.last_active_at ? formatDate(session.last_active_at) : '—'}</td>
              <td>
                {session.current ? null : (
                  <button type="button" onClick={() => onSignOut(session)}>
                    {session.type === 'app' ? 'Withdraw access' : 'Sign out'}
                    <span className="visually-hidden"> {sessionName(session)}</span>
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}
