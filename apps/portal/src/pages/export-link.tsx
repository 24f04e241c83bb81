import { useState } from 'react';
import type { Client, Export } from '@platform/client';
import { describeError } from '../api';
import { CopyField } from '../components/ui';

type LinkState =
  | { kind: 'idle' | 'busy' }
  | { kind: 'copied'; expiresAt: string }
  | { kind: 'shown'; url: string; expiresAt: string }
  | { kind: 'failed'; message: string };

const time = (iso: string) =>
  new Date(iso).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });

/**
 * "Copy download link": a fresh short-lived link to the export's file (POST
 * /v1/exports/{id}/download_links), put on the clipboard for a browser, curl or a job without a
 * token; the row says it was copied and until when it works. Where the clipboard is refused, the
 * link is shown to copy by hand. Each click makes a new link (and an audit log entry).
 */
export function DownloadLinkButton({ client, exp }: { client: Client; exp: Export }) {
  const [state, setState] = useState<LinkState>({ kind: 'idle' });
  const make = async () => {
    setState({ kind: 'busy' });
    try {
      const link = await client.exports.createDownloadLink(exp.id);
      try {
        await navigator.clipboard.writeText(link.url);
        setState({ kind: 'copied', expiresAt: link.expires_at });
      } catch {
        setState({ kind: 'shown', url: link.url, expiresAt: link.expires_at });
      }
    } catch (e) {
      setState({ kind: 'failed', message: describeError(e) });
    }
  };
  return (
    <>
      <button type="button" disabled={state.kind === 'busy'} onClick={() => void make()}>
        Copy download link<span className="visually-hidden"> of {exp.id}</span>
      </button>
      <span role="status" className="state-link-status">
        {state.kind === 'copied'
          ? `Link copied. It downloads the file without a token until ${time(state.expiresAt)}.`
          : ''}
      </span>
      {state.kind === 'shown' ? (
        <div className="state-link-shown">
          <p>The clipboard was not available: copy the link yourself.</p>
          <CopyField label="Download link" value={state.url} />
        </div>
      ) : null}
      {state.kind === 'failed' ? (
        <span role="alert" className="state-link-error">
          {state.message}
        </span>
      ) : null}
    </>
  );
}
