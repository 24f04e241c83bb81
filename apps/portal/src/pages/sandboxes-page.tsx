import { type FormEvent, useCallback, useEffect, useState } from 'react';
import type { Client, Sandbox, TokenInfo } from '@platform/client';
import { describeError, formatDate } from '../api';
import { type ConfirmRequest, useConfirm } from '../components/dialog';
import { TableWrap } from '../components/list';
import { Notice, PageHeading } from '../components/ui';
import { openSandbox, type SandboxMode } from '../sandbox-mode';
import { publishSandboxesChanged } from '../sandbox-switcher';

/**
 * Sandboxes (docs/sandboxes.md): the organization's test organizations, each seeded with a
 * generated school. Admins create, reset and delete them; every member can switch the portal into
 * one, with their own role there.
 */
export function SandboxesPage({
  client,
  info,
  mode,
  canManage,
}: {
  client: Client;
  info: TokenInfo;
  mode: SandboxMode;
  canManage: boolean;
}) {
  const [sandboxes, setSandboxes] = useState<Sandbox[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const [confirm, dialog] = useConfirm();
  const load = useCallback(() => {
    client.sandboxes.list({ per_page: 25 }).then(
      (page) => setSandboxes(page.data),
      (e: unknown) => setError(describeError(e)),
    );
  }, [client]);
  useEffect(load, [load]);

  const act = async (what: () => Promise<string>) => {
    setError(null);
    setMessage(null);
    try {
      setMessage(await what());
      load();
      publishSandboxesChanged();
    } catch (e) {
      setError(describeError(e));
    }
  };
  const { switchTo, reset, remove } = useSandboxActions(client, info, mode, act, confirm);

  return (
    <>
      <PageHeading>Sandboxes</PageHeading>
      <p>
        Test organizations seeded with a generated school: build and try an integration without
        touching real records. Their tokens start <code>pat_test_</code>.
      </p>
      {error ? <Notice kind="error">{error}</Notice> : null}
      {message ? <Notice kind="success">{message}</Notice> : null}
      {canManage ? (
        <CreateSandbox
          client={client}
          onCreated={(s) => void act(() => Promise.resolve(`${s.name} is ready.`))}
          onError={setError}
        />
      ) : null}
      <section aria-labelledby="sandbox-list">
        <h2 id="sandbox-list">Your sandboxes</h2>
        {sandboxes === null ? (
          <p>Loading…</p>
        ) : sandboxes.length === 0 ? (
          <p>No sandboxes yet.</p>
        ) : (
          <SandboxTable
            sandboxes={sandboxes}
            activeId={mode.active?.id ?? null}
            actions={{
              switchTo,
              reset: canManage ? reset : null,
              remove: canManage ? remove : null,
            }}
          />
        )}
      </section>
      {dialog}
    </>
  );
}

/** Switching the portal into a sandbox, resetting and deleting one (each confirmed first). */
function useSandboxActions(
  client: Client,
  info: TokenInfo,
  mode: SandboxMode,
  act: (what: () => Promise<string>) => Promise<void>,
  confirm: (request: ConfirmRequest) => Promise<boolean>,
) {
  const switchTo = (sandbox: Sandbox) =>
    act(async () => {
      mode.enter(await openSandbox(client, info, sandbox));
      return `Working in ${sandbox.name}.`;
    });
  const reset = (sandbox: Sandbox) =>
    act(async () => {
      const ok = await confirm({
        title: 'Reset this sandbox?',
        body: <p>Its records are deleted and its school generated again from its seed.</p>,
        confirm: 'Reset sandbox',
      });
      if (!ok) return '';
      await client.sandboxes.reset(sandbox.id);
      return `${sandbox.name} is back to its seed.`;
    });
  const remove = (sandbox: Sandbox) =>
    act(async () => {
      const ok = await confirm({
        title: 'Delete this sandbox?',
        body: <p>Everything in it goes, its tokens and webhooks included.</p>,
        confirm: 'Delete sandbox',
        typeToConfirm: sandbox.name,
      });
      if (!ok) return '';
      if (mode.active?.id === sandbox.id) mode.leave();
      await client.sandboxes.delete(sandbox.id);
      return `${sandbox.name} is deleted.`;
    });

  return { switchTo, reset, remove };
}

function CreateSandbox({
  client,
  onCreated,
  onError,
}: {
  client: Client;
  onCreated: (sandbox: Sandbox) => void;
  onError: (error: string | null) => void;
}) {
  const [name, setName] = useState('');
  const [students, setStudents] = useState('200');
  const [seed, setSeed] = useState('1');
  const [busy, setBusy] = useState(false);
  async function submit(e: FormEvent) {
    e.preventDefault();
    setBusy(true);
    onError(null);
    try {
      const made = await client.sandboxes.create({
        body: { name, students: Number(students), seed: Number(seed) },
      });
      setName('');
      onCreated(made);
    } catch (error) {
      onError(describeError(error));
    } finally {
      setBusy(false);
    }
  }
  return (
    <section aria-labelledby="create-sandbox">
      <h2 id="create-sandbox">Create a sandbox</h2>
      <form onSubmit={(e) => void submit(e)} className="stack">
        <div className="field">
          <label htmlFor="sandbox-name">Name</label>
          <input
            id="sandbox-name"
            required
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="sandbox-students">Students</label>
          <input
            id="sandbox-students"
            type="number"
            min={0}
            max={50000}
            value={students}
            onChange={(e) => setStudents(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="sandbox-seed">Seed</label>
          <input
            id="sandbox-seed"
            type="number"
            min={0}
            value={seed}
            onChange={(e) => setSeed(e.target.value)}
          />
        </div>
        <button type="submit" className="primary" disabled={busy || !name.trim()}>
          Create sandbox
        </button>
      </form>
      {busy ? <p role="status">Generating its school…</p> : null}
    </section>
  );
}

type Action = ((sandbox: Sandbox) => Promise<void>) | null;

function SandboxTable({
  sandboxes,
  activeId,
  actions,
}: {
  sandboxes: Sandbox[];
  activeId: string | null;
  actions: { switchTo: Action; reset: Action; remove: Action };
}) {
  return (
    <TableWrap label="Sandbox table">
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Students</th>
            <th scope="col">Seed</th>
            <th scope="col">Created</th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {sandboxes.map((sandbox) => (
            <tr key={sandbox.id}>
              <td>{sandbox.name}</td>
              <td>{sandbox.students.toLocaleString()}</td>
              <td>{sandbox.seed}</td>
              <td>{formatDate(sandbox.created_at)}</td>
              <td className="actions">
                {activeId === sandbox.id ? <span>Working in it</span> : null}
                {actions.switchTo && activeId !== sandbox.id ? (
                  <button type="button" onClick={() => void actions.switchTo!(sandbox)}>
                    Switch to<span className="visually-hidden"> {sandbox.name}</span>
                  </button>
                ) : null}
                {actions.reset ? (
                  <button type="button" onClick={() => void actions.reset!(sandbox)}>
                    Reset<span className="visually-hidden"> {sandbox.name}</span>
                  </button>
                ) : null}
                {actions.remove ? (
                  <button
                    type="button"
                    className="danger"
                    onClick={() => void actions.remove!(sandbox)}
                  >
                    Delete<span className="visually-hidden"> {sandbox.name}</span>
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
