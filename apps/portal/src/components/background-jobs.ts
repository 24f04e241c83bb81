import { useCallback, useEffect, useState } from 'react';
import { describeError } from '../api';

/**
 * The newest page of background jobs (exports, imports), refreshed every second while any of
 * them is queued or running. `reload` fetches it again now; `error` is the last failure, said.
 */
export function useBackgroundJobs<T extends { status: string }>(
  fetchJobs: () => Promise<{ data: T[] }>,
): {
  jobs: T[] | null;
  error: string | null;
  setError: (error: string | null) => void;
  reload: () => void;
} {
  const [jobs, setJobs] = useState<T[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  const reload = useCallback(() => {
    fetchJobs().then(
      (page) => setJobs(page.data),
      (e: unknown) => setError(describeError(e)),
    );
  }, [fetchJobs]);
  useEffect(reload, [reload]);

  const running = jobs?.some((job) => job.status === 'queued' || job.status === 'running');
  useEffect(() => {
    if (!running) return;
    const timer = setInterval(reload, 1000);
    return () => clearInterval(timer);
  }, [running, reload]);

  return { jobs, error, setError, reload };
}
