import type { Import } from '@platform/contract';
import type { RawResponse, TestServer } from './server';

/** `POST /v1/imports?<query>` with `content` as the multipart part `file`. */
export async function upload(
  server: TestServer,
  token: string,
  query: string,
  content: string | Uint8Array,
  options: { type?: string; name?: string; headers?: Record<string, string> } = {},
): Promise<RawResponse<Import>> {
  const form = new FormData();
  const blob = new Blob([content], { type: options.type ?? 'application/x-ndjson' });
  form.append('file', blob, options.name ?? 'rows.ndjson');
  const res = await fetch(`${server.url}/v1/imports?${query}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token}`, ...options.headers },
    body: form,
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: JSON.parse(text) as Import };
}

/** Polls an import until it has finished. */
export async function finished(server: TestServer, token: string, id: string): Promise<Import> {
  for (let i = 0; i < 1200; i += 1) {
    const res = await fetch(`${server.url}/v1/imports/${id}`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    const body = (await res.json()) as Import;
    if (res.status !== 200) throw new Error(`GET /v1/imports/${id}: ${res.status}`);
    if (body.status === 'succeeded' || body.status === 'failed') return body;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`import ${id} did not finish`);
}

/** Uploads, expects the 202, and waits for the import to finish. */
export async function imported(
  server: TestServer,
  token: string,
  query: string,
  content: string,
  options: { type?: string; name?: string } = {},
): Promise<Import> {
  const res = await upload(server, token, query, content, options);
  if (res.status !== 202) throw new Error(`upload: ${res.status} ${JSON.stringify(res.body)}`);
  return finished(server, token, res.body.id);
}

/** The error report's lines as records of its header's columns. */
export async function errorReport(server: TestServer, token: string, id: string) {
  const res = await fetch(`${server.url}/v1/imports/${id}/errors`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  const text = await res.text();
  const [header, ...lines] = text.trimEnd().split('\n');
  const columns = header!.split(',');
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    rows: lines.map((line) => Object.fromEntries(splitCsv(line).map((v, i) => [columns[i]!, v]))),
  };
}

function splitCsv(line: string): string[] {
  const cells: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < line.length; i += 1) {
    const ch = line[i]!;
    if (quoted) {
      if (ch === '"' && line[i + 1] === '"') {
        cell += '"';
        i += 1;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      cells.push(cell);
      cell = '';
    } else cell += ch;
  }
  cells.push(cell);
  return cells;
}

export function ndjsonOf(rows: readonly object[]): string {
  return rows.map((row) => JSON.stringify(row)).join('\n') + '\n';
}
