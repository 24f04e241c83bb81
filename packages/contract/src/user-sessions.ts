/**
 * "My sessions": where the calling member is signed in (browsers) and which apps they approved,
 * each with the device and address it was last used from, so they can sign out any of them.
 */
import { idSchema } from './ids';
import { timestampSchema } from './resource';
import { z } from './zod-openapi';

export const UserSessionSchema = z
  .object({
    id: idSchema('session'),
    object: z.literal('session'),
    type: z
      .enum(['browser', 'app'])
      .describe(
        '`browser`: a sign-in on the sign-in page, and the portal tokens it gave. `app`: an OAuth app the member approved, with every token it holds for them.',
      ),
    app: z
      .object({ id: idSchema('oauth_client'), name: z.string() })
      .nullable()
      .describe('The approved app (`type: app`); null for a browser.'),
    device: z
      .string()
      .nullable()
      .describe(
        "The User-Agent it last signed in or fetched a token with (a browser's, or the app's HTTP client), as sent, at most 300 characters. Null when none was sent.",
      ),
    ip: z
      .string()
      .nullable()
      .describe(
        'The IP address it last signed in or fetched a token from (behind a proxy, the forwarded client only with `TRUST_PROXY`).',
      ),
    signed_in_at: timestampSchema
      .nullable()
      .describe('When the browser signed in. Null for an app.'),
    last_active_at: timestampSchema
      .nullable()
      .describe(
        'When it last signed in, was approved or fetched a token: calls made with a token do not move it, so a portal tab counts once an hour. Null when nothing has been recorded since it began (before this field existed).',
      ),
    current: z
      .boolean()
      .describe('Whether the calling token came from it: "this browser" in the portal.'),
  })
  .openapi({ title: 'UserSession' });

export const UserSessionListSchema = z
  .object({
    object: z.literal('user_sessions'),
    data: z
      .array(UserSessionSchema)
      .describe('Browsers first, the most recently active first; then apps, likewise.'),
  })
  .openapi({ title: 'UserSessionList' });

/** What is left of a session signed out (the same stub as a deleted record's). */
export const DeletedSessionSchema = z
  .object({ id: idSchema('session'), object: z.literal('session'), deleted: z.literal(true) })
  .openapi({ title: 'DeletedSession' });

export type UserSession = z.infer<typeof UserSessionSchema>;
