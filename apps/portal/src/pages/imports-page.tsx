import { type FormEvent, useCallback, useState } from 'react';
import type { Client, Import, ImportCollection, ImportMode } from '@platform/client';
import { describeError, formatDate } from '../api';
import { useBackgroundJobs } from '../components/background-jobs';
import { Notice, PageHeading } from '../components/ui';
import { TableWrap } from '../components/list';

const COLLECTIONS: readonly ImportCollection[] = [
  'students',
  'courses',
  'enrollments',
  'payments',
  'exams',
  'exam_results',
];
/** The collections a `full` import can withdraw from (the contract's IMPORT_REMOVALS). */
const FULL_COLLECTIONS: readonly ImportCollection[] = ['students', 'courses', 'enrollments'];

/** What the form imports: one collection's file, or a OneRoster bundle (a zip). */
type ImportKind = ImportCollection | 'oneroster';

const collectionLabel = (collection: string): string =>
  collection.charAt(0).toUpperCase() + collection.slice(1).replace(/_/g, ' ');

/** An import's collection, and for a bundle's import the file it came from. */
const importLabel = (imp: Import): string =>
  collectionLabel(imp.collection) + (imp.bundle ? ` (OneRoster ${imp.bundle.file})` : '');

/** What an import did (or, for a dry run, would do), in words. */
function describeCounts(imp: Import): string {
  const c = imp.counts;
  const verb = imp.dry_run ? 'would ' : '';
  const parts = [
    `${c.created.toLocaleString()} ${verb}${imp.dry_run ? 'create' : 'created'}`,
    `${c.updated.toLocaleString()} ${verb}${imp.dry_run ? 'update' : 'updated'}`,
    `${c.unchanged.toLocaleString()} unchanged`,
    `${c.failed.toLocaleString()} refused`,
  ];
  if (c.skipped > 0) parts.push(`${c.skipped.toLocaleString()} not imported`);
  if (imp.mode === 'full')
    parts.push(`${c.withdrawn.toLocaleString()} ${verb}${imp.dry_run ? 'withdraw' : 'withdrawn'}`);
  return parts.join(', ');
}

/**
 * SIS imports: upload a school's file of one collection, try it as a dry run, apply it (and
 * confirm a full import past its change threshold), follow it, and download its error report.
 */
export function ImportsPage({ client, canCreate }: { client: Client; canCreate: boolean }) {
  const fetchJobs = useCallback(() => client.imports.list({ per_page: 25 }), [client]);
  const { jobs: imports, error, setError, reload: load } = useBackgroundJobs(fetchJobs);

  async function downloadErrors(imp: Import) {
    setError(null);
    try {
      const report = await client.imports.errors(imp.id);
      const url = URL.createObjectURL(new Blob([report], { type: 'text/csv' }));
      const link = document.createElement('a');
      link.href = url;
      link.download = `${imp.id}-errors.csv`;
      link.click();
      URL.revokeObjectURL(url);
    } catch (e) {
      setError(describeError(e));
    }
  }

  return (
    <>
      <PageHeading>Imports</PageHeading>
      <p>
        A file from your student information system, one collection at a time: CSV with a header
        row, or NDJSON; or a OneRoster bundle (zip) of users, classes and enrollments. Each row is
        matched on its <code>external_id</code>: created, updated or left unchanged. A full import
        (a bundle's bulk files) also withdraws the records the file leaves out.
      </p>
      {error ? <Notice kind="error">{error}</Notice> : null}
      {canCreate ? (
        <StartImport client={client} onChanged={load} onError={setError} />
      ) : (
        <p className="hint">Your role lets you see imports, not start them.</p>
      )}
      <section aria-labelledby="import-list">
        <h2 id="import-list">Recent imports</h2>
        {imports === null ? (
          <p>Loading…</p>
        ) : imports.length === 0 ? (
          <p>No imports yet.</p>
        ) : (
          <ImportTable imports={imports} onErrors={(imp) => void downloadErrors(imp)} />
        )}
      </section>
    </>
  );
}

/** What the upload form holds: the choices, the file, and the last import it ran. */
interface ImportChoices {
  collection: ImportKind;
  mode: ImportMode;
  threshold: string;
  file: File | null;
}

/** Runs an import of the form's file (a dry run, or confirmed past the threshold) to its end. */
function useImportRun(
  client: Client,
  onChanged: () => void,
  onError: (error: string | null) => void,
) {
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<Import[] | null>(null);
  async function run(choices: ImportChoices, options: { dryRun: boolean; confirm?: boolean }) {
    const { collection, mode, threshold, file } = choices;
    if (!file) return;
    setBusy(true);
    onError(null);
    setResult(null);
    try {
      const bundle = collection === 'oneroster';
      const started = await client.imports.create({
        query: {
          ...(bundle ? { format: 'oneroster' as const } : { collection, mode }),
          dry_run: options.dryRun,
          ...((bundle || mode === 'full') && { change_threshold: Number(threshold) / 100 }),
          ...(options.confirm && { confirm: true }),
        },
        body: { file, filename: file.name },
      });
      onChanged();
      // A bundle's imports run one after another: each is awaited in turn.
      const finished: Import[] = [];
      for (const id of started.bundle?.imports ?? [started.id]) {
        finished.push(await client.imports.wait(id, { intervalMs: 500 }));
      }
      setResult(finished);
      onChanged();
    } catch (e) {
      onError(describeError(e));
    } finally {
      setBusy(false);
    }
  }
  return { busy, result, setResult, run };
}

/** The upload form: a dry run first, then the import itself, confirmed past the threshold. */
function StartImport({
  client,
  onChanged,
  onError,
}: {
  client: Client;
  onChanged: () => void;
  onError: (error: string | null) => void;
}) {
  const [choices, setChoices] = useState<ImportChoices>({
    collection: 'students',
    mode: 'upsert',
    threshold: '10',
    file: null,
  });
  const { busy, result, setResult, run } = useImportRun(client, onChanged, onError);
  const change = (next: Partial<ImportChoices>) => {
    setChoices((current) => ({ ...current, ...next }));
    setResult(null);
  };
  const pastThreshold = (result ?? []).some(
    (imp) => imp.status === 'failed' && /confirm=true/.test(imp.error ?? ''),
  );
  return (
    <section aria-labelledby="create-import">
      <h2 id="create-import">Import a file</h2>
      <form
        onSubmit={(e: FormEvent) => {
          e.preventDefault();
          void run(choices, { dryRun: false });
        }}
        className="stack"
      >
        <ImportFields choices={choices} onChange={change} />
        <div className="state-export-actions">
          <button
            type="button"
            disabled={busy || !choices.file}
            onClick={() => void run(choices, { dryRun: true })}
          >
            Dry run
          </button>
          <button type="submit" disabled={busy || !choices.file}>
            Import
          </button>
        </div>
      </form>
      {busy ? <p role="status">Working through the file…</p> : null}
      {result?.map((imp) => (
        <ImportResult key={imp.id} imp={imp} />
      ))}
      {pastThreshold ? (
        <button
          type="button"
          disabled={busy}
          onClick={() => void run(choices, { dryRun: false, confirm: true })}
        >
          Confirm and import anyway
        </button>
      ) : null}
    </section>
  );
}

/** The form's fields: collection (or a bundle), mode (full only where it can withdraw), file. */
function ImportFields({
  choices,
  onChange,
}: {
  choices: ImportChoices;
  onChange: (next: Partial<ImportChoices>) => void;
}) {
  const { collection, mode, threshold } = choices;
  const bundle = collection === 'oneroster';
  return (
    <>
      <div className="field">
        <label htmlFor="import-collection">Collection</label>
        <select
          id="import-collection"
          value={collection}
          onChange={(e) => {
            const next = e.target.value as ImportKind;
            const full = FULL_COLLECTIONS.includes(next as ImportCollection);
            onChange({ collection: next, ...(!full && { mode: 'upsert' as const }) });
          }}
        >
          {COLLECTIONS.map((value) => (
            <option key={value} value={value}>
              {collectionLabel(value)}
            </option>
          ))}
          <option value="oneroster">OneRoster bundle (zip)</option>
        </select>
      </div>
      {bundle ? (
        <p className="hint">
          Its manifest says whether each file is bulk (full: also withdraws what it leaves out) or
          delta.
        </p>
      ) : (
        <ModeField choices={choices} onChange={onChange} />
      )}
      {mode === 'full' || bundle ? (
        <div className="field">
          <label htmlFor="import-threshold">Stop if it would withdraw more than (%)</label>
          <input
            id="import-threshold"
            type="number"
            min={0}
            max={100}
            value={threshold}
            onChange={(e) => onChange({ threshold: e.target.value })}
          />
        </div>
      ) : null}
      <div className="field">
        <label htmlFor="import-file">{bundle ? 'Bundle (zip)' : 'File (CSV or NDJSON)'}</label>
        <input
          id="import-file"
          type="file"
          accept={
            bundle ? '.zip,application/zip' : '.csv,.ndjson,.jsonl,text/csv,application/x-ndjson'
          }
          onChange={(e) => onChange({ file: e.target.files?.[0] ?? null })}
        />
      </div>
    </>
  );
}

/** Upsert or full, full only for the collections it can withdraw from. */
function ModeField({
  choices,
  onChange,
}: {
  choices: ImportChoices;
  onChange: (next: Partial<ImportChoices>) => void;
}) {
  const { collection, mode } = choices;
  return (
    <div className="field">
      <label htmlFor="import-mode">Mode</label>
      <select
        id="import-mode"
        value={mode}
        onChange={(e) => onChange({ mode: e.target.value as ImportMode })}
      >
        <option value="upsert">Upsert: create and update the file's records</option>
        {FULL_COLLECTIONS.includes(collection as ImportCollection) ? (
          <option value="full">Full: also withdraw the records the file leaves out</option>
        ) : null}
      </select>
    </div>
  );
}

function ImportResult({ imp }: { imp: Import }) {
  if (imp.status === 'failed') {
    return <Notice kind="error">{`${importLabel(imp)}: ${imp.error ?? 'failed.'}`}</Notice>;
  }
  return (
    <Notice kind="success">
      {importLabel(imp)}
      {imp.dry_run ? ', dry run, nothing written: ' : ' imported: '}
      {describeCounts(imp)}.
    </Notice>
  );
}

function ImportTable({
  imports,
  onErrors,
}: {
  imports: Import[];
  onErrors: (imp: Import) => void;
}) {
  return (
    <TableWrap label="Import table">
      <table>
        <thead>
          <tr>
            <th scope="col">Collection</th>
            <th scope="col">Mode</th>
            <th scope="col">Status</th>
            <th scope="col">Rows</th>
            <th scope="col">Result</th>
            <th scope="col">Started</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {imports.map((imp) => (
            <tr key={imp.id}>
              <td>{importLabel(imp)}</td>
              <td>
                {imp.mode}
                {imp.dry_run ? ' (dry run)' : ''}
              </td>
              <td>{imp.status}</td>
              <td>
                {imp.rows_processed.toLocaleString()} of {imp.rows.toLocaleString()}
              </td>
              <td>{imp.error ?? describeCounts(imp)}</td>
              <td>{formatDate(imp.created_at)}</td>
              <td>
                {imp.counts.failed > 0 || imp.counts.skipped > 0 || imp.bundle ? (
                  <button type="button" onClick={() => onErrors(imp)}>
                    Error report<span className="visually-hidden"> {imp.id}</span>
                  </button>
                ) : null}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </TableWrap>
  );
}
