import { ERROR_CODES, ERROR_TITLES, type ErrorCode, PROBLEM_TYPE_PATH } from '@platform/contract';
import { docPage } from './doc-page';

/** What a caller should do about each code: a Record, so a new code cannot ship undocumented. */
export const ERROR_GUIDANCE: Record<ErrorCode, string> = {
  validation_error:
    'The request is invalid. `errors` lists each offending parameter (`path`, `message`, `code`); fix those and send it again. Sending it unchanged fails the same way.',
  unauthorized:
    'No usable token: `Authorization: Bearer <token>` is missing, malformed, unknown, expired or revoked. Create a new personal access token, or refresh the OAuth access token.',
  forbidden:
    'The token is valid but may not do this (for example, an action reserved to another principal). Use a token that may.',
  insufficient_scope:
    'The token lacks the scope this operation requires; `WWW-Authenticate` and `detail` name it. Use a token with that scope, or ask the user to authorize it.',
  not_found:
    'No such resource in your organization, or no such path. Check the id and the path: resources of other organizations are not found either.',
  method_not_allowed:
    'The path exists, but not with this method. `Allow` lists the methods it accepts.',
  not_acceptable:
    'The `Accept` header excludes JSON. Send `Accept: application/json`, or no `Accept` header.',
  conflict:
    'The request conflicts with current state: a unique value already taken, or an `Idempotency-Key` reused with another body or still in progress. Read `detail`; change the value, or wait and retry with the same key.',
  invalid_state_transition:
    "The resource's `status` does not allow this action (for example, activating a cancelled enrollment). Fetch the resource and check its `status` first.",
  cursor_expired:
    'The change feed no longer holds the changes after this cursor (they are older than the 30 days kept). Start the copy again from an export (`POST /v1/exports`) and follow the feed from its `cursor`.',
  payload_too_large: 'The request body is over the 1 MB limit. Send less in one request.',
  unsupported_media_type: 'Send the body as JSON, with `Content-Type: application/json`.',
  rate_limited:
    "Your organization's budget for the minute is spent. Wait the `Retry-After` seconds; `X-RateLimit-Remaining` and `X-RateLimit-Reset` say where you stand.",
  internal_error:
    'Something went wrong on our side. Retry later (a `POST` with the same `Idempotency-Key` is safe); if it persists, quote `request_id` to support.',
  service_unavailable:
    'The server cannot answer now: a `q` search ran out of time, or a dependency is down. Wait the `Retry-After` seconds and retry; narrow a search with a longer `q` or filters.',
};

export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"]/g,
    (c) => `&${{ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot' }[c]};`,
  );
}

/** `code` spans in the guidance, as the README writes them. */
export function inline(text: string): string {
  return escapeHtml(text).replace(/`([^`]+)`/g, '<code>$1</code>');
}

/** The page problem `type` URIs point at: one entry per code, its id the code itself. */
export function renderErrorsPage(): string {
  const rows = (Object.keys(ERROR_CODES) as ErrorCode[])
    .map(
      (code) => `  <tr id="${code}">
    <td><a href="#${code}"><code>${code}</code></a></td>
    <td>${ERROR_CODES[code]}</td>
    <td>${escapeHtml(ERROR_TITLES[code])}</td>
    <td>${inline(ERROR_GUIDANCE[code])}</td>
  </tr>`,
    )
    .join('\n');
  return docPage(
    'Platform API errors',
    `  <h1>Errors</h1>
  <p>Every error is an <code>application/problem+json</code> document (RFC 9457). Its
  <code>type</code> links to its entry here (<code>${PROBLEM_TYPE_PATH}#&lt;code&gt;</code>); branch
  on <code>code</code>, and quote <code>request_id</code> to support. The
  <a href="/docs">API reference</a> says which codes each operation answers with.</p>
  <table>
  <tr><th>Code</th><th>Status</th><th>Title</th><th>What to do</th></tr>
${rows}
  </table>
`,
  );
}
