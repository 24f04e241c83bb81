import { type FormEvent, useCallback, useState } from 'react';
import {
  type Client,
  type Export,
  type ExportCollection,
  EXPORT_COLLECTIONS,
  type ExportFormat,
} from '@platform/client';
import { describeError, formatDate } from '../api';
import { useBackgroundJobs } from '../components/background-jobs';
import { Notice, PageHeading } from '../components/ui';
import { TableWrap } from '../components/list';
import { describeFilters, ExportFilters, filterBody, NO_FILTERS } from './export-filters';
import { DownloadLinkButton } from './export-link';

/** A collection as the page names it: `exam_results` → `Exam results`. */
const collectionLabel = (collection: string): string =>
  collection.charAt(0).toUpperCase() + collection.slice(1).replace(/_/g, ' ');

/** Exports of the organization's collections: start one, follow it, download its file. */
export function ExportsPage({ client, canCreate }: { client: Client; canCreate: boolean }) {
  const fetchJobs = useCallback(() => client.exports.list({ per_page: 25 }), [client]);
  const { jobs: exports, error, setError, reload: load } = useBackgroundJobs(fetchJobs);

  async function download(exp: Export) {
    setError(null);
    try {
      const blob = await new Response(await client.exports.stream(exp.id)).blob();
      const url = URL.createObjectURL(blob);
      const link = document.createElement('a');
      link.href = url;
      link.download = `${exp.collection}-${exp.id}.${exp.format === 'csv' ? 'csv' : 'ndjson'}`;
      link.click();
      URL.revokeObjectURL(url);
    } catch (e) {
      setError(describeError(e));
    }
  }

  return (
    <>
      <PageHeading>Exports</PageHeading>
      <p>
        A whole collection as one file, read from one consistent snapshot. Files are kept for a
        limited time, then deleted.
      </p>
      {error ? <Notice kind="error">{error}</Notice> : null}
      {canCreate ? (
        <StartExport client={client} onStarted={load} onError={setError} />
      ) : (
        <p className="hint">Your role lets you see exports, not start them.</p>
      )}
      <section aria-labelledby="export-list">
        <h2 id="export-list">Recent exports</h2>
        {exports === null ? (
          <p>Loading…</p>
        ) : exports.length === 0 ? (
          <p>No exports yet.</p>
        ) : (
          <ExportTable client={client} exports={exports} onDownload={(exp) => void download(exp)} />
        )}
      </section>
    </>
  );
}

/** The form that starts an export of one collection in one format. */
function StartExport({
  client,
  onStarted,
  onError,
}: {
  client: Client;
  onStarted: () => void;
  onError: (error: string | null) => void;
}) {
  const [collection, setCollection] = useState<ExportCollection>('students');
  const [format, setFormat] = useState<ExportFormat>('ndjson');
  const [filters, setFilters] = useState(NO_FILTERS);
  const [busy, setBusy] = useState(false);

  async function create(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    onError(null);
    try {
      await client.exports.create({
        body: { collection, format, filters: filterBody(collection, filters) },
      });
      onStarted();
    } catch (e) {
      onError(describeError(e));
    } finally {
      setBusy(false);
    }
  }

  return (
    <section aria-labelledby="create-export">
      <h2 id="create-export">Start an export</h2>
      <form onSubmit={(e) => void create(e)} className="stack">
        <div className="field">
          <label htmlFor="export-collection">Collection</label>
          <select
            id="export-collection"
            value={collection}
            onChange={(e) => {
              setCollection(e.target.value as ExportCollection);
              setFilters(NO_FILTERS);
            }}
          >
            {EXPORT_COLLECTIONS.map((value) => (
              <option key={value} value={value}>
                {collectionLabel(value)}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="export-format">Format</label>
          <select
            id="export-format"
            value={format}
            onChange={(e) => setFormat(e.target.value as ExportFormat)}
          >
            <option value="ndjson">NDJSON (one JSON object per line)</option>
            <option value="csv">CSV</option>
          </select>
        </div>
        <ExportFilters collection={collection} values={filters} onChange={setFilters} />
        <button type="submit" disabled={busy}>
          Start export
        </button>
      </form>
    </section>
  );
}

function ExportTable({
  client,
  exports,
  onDownload,
}: {
  client: Client;
  exports: Export[];
  onDownload: (exp: Export) => void;
}) {
  return (
    <TableWrap label="Export table">
      <table>
        <thead>
          <tr>
            <th scope="col">Collection</th>
            <th scope="col">Format</th>
            <th scope="col">Filters</th>
            <th scope="col">Status</th>
            <th scope="col">Rows</th>
            <th scope="col">Started</th>
            <th scope="col">Expires</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {exports.map((exp) => (
            <tr key={exp.id}>
              <td>{collectionLabel(exp.collection)}</td>
              <td>{exp.format.toUpperCase()}</td>
              <td className="state-export-filter-cell">{describeFilters(exp.filters)}</td>
              <td>{exp.status}</td>
              <td>{exp.row_count.toLocaleString()}</td>
              <td>{formatDate(exp.created_at)}</td>
              <td>{formatDate(exp.expires_at)}</td>
              <td>
                {exp.status === 'succeeded' ? (
                  <div className="state-export-actions">
                    <button type="button" onClick={() => onDownload(exp)}>
                      Download<span className="visually-hidden"> {exp.id}</span>
                    </button>
                    <DownloadLinkButton client={client} exp={exp} />
                  </div>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}
