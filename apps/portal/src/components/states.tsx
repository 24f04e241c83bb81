import { useEffect, useState } from 'react';
import type { Failure } from '../api';
import { forgetSession, signIn } from '../session';
import { PageHeading } from './ui';

/** Seconds left until `until` (epoch ms), ticking once a second; 0 once passed. */
function useCountdown(until: number | null): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (until === null) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [until]);
  return until === null ? 0 : Math.max(0, Math.ceil((until - now) / 1000));
}

/**
 * A request that failed, said plainly with the way out: try again (after the wait the server
 * gave, for a 429), sign in again (401), or ask an admin (403).
 */
export function FailureNotice({ failure, onRetry }: { failure: Failure; onRetry?: () => void }) {
  const [waitUntil] = useState(() =>
    failure.kind === 'rate_limited' && failure.retryAfter
      ? Date.now() + failure.retryAfter * 1000
      : null,
  );
  const left = useCountdown(waitUntil);
  const retry = onRetry ? (
    <button type="button" onClick={onRetry} disabled={left > 0}>
      Try again{left > 0 ? ` in ${left} s` : ''}
    </button>
  ) : null;
  switch (failure.kind) {
    case 'network':
      return (
        <div className="notice notice-error failure" role="alert">
          <p>
            <strong>The API could not be reached.</strong> Check your connection; nothing was
            changed.
          </p>
          {retry}
        </div>
      );
    case 'rate_limited':
      return (
        <div className="notice notice-error failure" role="alert">
          <p>
            <strong>Too many requests.</strong> Your organization used up its requests for this
            minute
            {failure.retryAfter
              ? `; the API accepts more in ${failure.retryAfter} second${failure.retryAfter === 1 ? '' : 's'}.`
              : '; wait a moment.'}
          </p>
          {retry}
        </div>
      );
    case 'unauthenticated':
      return (
        <div className="notice notice-error failure" role="alert">
          <p>
            <strong>Your session has ended.</strong> Sign in again to continue.
          </p>
          <button
            type="button"
            onClick={() =>
              void forgetSession().then(() => signIn(location.pathname + location.search))
            }
          >
            Sign in again
          </button>
        </div>
      );
    case 'forbidden':
      return (
        <div className="notice notice-error failure" role="alert">
          <p>
            <strong>Your role does not allow this.</strong> Ask an admin of your organization if you
            need it.
          </p>
        </div>
      );
    case 'other':
      return (
        <div className="notice notice-error failure" role="alert">
          <p>{failure.detail}</p>
          {retry}
        </div>
      );
  }
}

/** A page the member's role cannot open: said as such, with where to go instead. */
export function NoAccess({ page, role }: { page: string; role: string }) {
  return (
    <>
      <PageHeading>No access</PageHeading>
      <p>
        The {page} page is not open to your role ({role}). Ask an admin of your organization if you
        need it.
      </p>
    </>
  );
}
