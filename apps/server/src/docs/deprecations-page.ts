import { contract, deprecationAnchor, deprecationNote, listDeprecations } from '@platform/contract';
import type { AppRouter } from '@ts-rest/core';
import { escapeHtml, inline } from './errors-page';
import { docPage } from './doc-page';

const PART_LABELS: Record<string, string> = {
  operation: 'the operation',
  query: 'query parameter',
  body: 'body field',
};

function partLabel(part: string): string {
  if (part === 'operation') return PART_LABELS.operation!;
  const [kind, ...rest] = part.split('.');
  return `${PART_LABELS[kind!] ?? kind} <code>${escapeHtml(rest.join('.'))}</code>`;
}

/**
 * The page the `Link; rel="deprecation"` header points at when the contract names no migration
 * note: one entry per deprecated part, its id the anchor the header names.
 */
export function renderDeprecationsPage(router: AppRouter = contract): string {
  const entries = listDeprecations(router);
  const rows = entries
    .map((entry) => {
      const id = deprecationAnchor(entry, entry.part);
      return `  <tr id="${id}">
    <td><a href="#${id}"><code>${escapeHtml(entry.operationId)}</code></a> (<code>${entry.method} ${escapeHtml(entry.path)}</code>)</td>
    <td>${partLabel(entry.part)}</td>
    <td>${inline(deprecationNote(entry.deprecation))}</td>
  </tr>`;
    })
    .join('\n');
  return docPage(
    'Platform API deprecations',
    `  <h1>Deprecations</h1>
  <p>A request that uses a deprecated operation, query parameter or body field is answered with
  <code>Deprecation</code> (RFC 9745), <code>Sunset</code> (RFC 8594) once a date is set, and a
  <code>Link</code> with <code>rel="deprecation"</code> to its entry here. A deprecated part keeps
  working for at least 6 months (a whole operation: 12) after its <code>Deprecation</code> date;
  the <a href="/docs">API reference</a> marks it <code>deprecated</code>, and every SDK warns once
  when it is used.</p>
${
  entries.length === 0
    ? '  <p id="none">Nothing in this API is deprecated today.</p>'
    : `  <table>
  <tr><th>Operation</th><th>What</th><th>Since, sunset and what to use</th></tr>
${rows}
  </table>`
}
`,
  );
}
