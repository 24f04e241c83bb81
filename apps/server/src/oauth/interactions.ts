import { Inject, Injectable, Logger } from '@nestjs/common';
import { AuditService } from '../audit/audit.service';
import { isSameOriginPost } from '../common/same-origin';
import { APP_CONFIG } from '../config/config.module';
import { type AppConfig, serverOrigin } from '../config/env';
import { normalizeIp } from '../rate-limit/organization-throttler.guard';
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import { isScope, OAUTH_PATHS, ROLE_SCOPES } from '@platform/contract';
import type { InteractionResults } from 'oidc-provider';
import { OrganizationsService } from '../organizations/organizations.service';
import { OAuthClientsService } from './oauth-clients.service';
import { OAuthProviderService } from './oauth-provider.service';
import { toProviderRealm } from './realm';
import { consentPage, describeScope, loginPage, organizationChoicePage, page } from './pages';
import { UsersService } from './users.service';
import { isPortalClient, PORTAL_CLIENT_NAME } from './portal-client';
import type { AccountRecord } from './entities';
import { hashToken } from '../security/crypto';

/** What the pages need of a client; `organizationId` null: the portal, open to every member. */
interface PageClient {
  name: string;
  organizationId: string | null;
}

/** Whether this user may approve this client: a member of its organization, or anyone for the portal. */
function mayApprove(client: PageClient, user: { organizationId: string }): boolean {
  return client.organizationId === null || client.organizationId === user.organizationId;
}

type Prompt = { name: string; details: Record<string, unknown> };

/** An account whose password was proven, waiting for its organization: its fingerprint then. */
interface ProvenAccount {
  id: string;
  password: string;
}

/** A field of the urlencoded form body, or '' when absent or repeated. */
function field(req: Request, name: string): string {
  const value = (req.body as Record<string, unknown> | undefined)?.[name];
  return typeof value === 'string' ? value : '';
}

function param(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

@Injectable()
export class InteractionPages {
  private readonly logger = new Logger('OAuth');

  private readonly origin: string;
  /** Whether the sign-in page offers a reset by email: only a server that sends mail can. */
  private readonly passwordReset: boolean;

  constructor(
    private readonly oauth: OAuthProviderService,
    private readonly clients: OAuthClientsService,
    private readonly users: UsersService,
    private readonly organizations: OrganizationsService,
    private readonly audit: AuditService,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.origin = serverOrigin(config);
    this.passwordReset = config.mail.smtpUrl !== undefined;
  }

  router(): Router {
    const router = express.Router();
    const form = express.urlencoded({ extended: false, limit: '16kb' });
    router.use((_req: Request, res: Response, next: NextFunction) => {
      // Never cached: the pages carry a one-time interaction.
      res.setHeader('Cache-Control', 'no-store');
      next();
    });
    router.get(
      '/:uid',
      this.wrap((req, res) => this.show(req, res)),
    );
    // Every form here changes state (signs in, approves, signs out): only from our own pages.
    const ownPage = (req: Request, res: Response, next: NextFunction) => {
      if (isSameOriginPost(req, this.origin)) return next();
      this.fail(
        res,
        403,
        'This form can only be sent from its own page. Start again from the app.',
      );
    };
    router.post(
      '/:uid/login',
      ownPage,
      form,
      this.wrap((req, res) => this.login(req, res)),
    );
    router.post(
      '/:uid/consent',
      ownPage,
      form,
      this.wrap((req, res) => this.consent(req, res)),
    );
    router.post(
      '/:uid/organization',
      ownPage,
      form,
      this.wrap((req, res) => this.chooseOrganization(req, res)),
    );
    router.post(
      '/:uid/switch',
      ownPage,
      form,
      this.wrap((req, res) => this.switchAccount(req, res)),
    );
    return router;
  }

  private async show(req: Request, res: Response): Promise<void> {
    const details = await this.oauth.provider.interactionDetails(req, res);
    const client = await this.pageClient(param(details.params.client_id));
    if (!client) return this.fail(res, 400, 'The application is no longer registered.');
    // Both pages' forms end in a redirect to the app: allow exactly that target in the CSP.
    this.allowFormTarget(res, param(details.params.redirect_uri));
    const prompt = details.prompt as Prompt;
    const context = {
      uid: details.uid,
      clientName: client.name,
      redirectUri: param(details.params.redirect_uri),
      passwordReset: this.passwordReset,
    };
    if (prompt.name === 'login') {
      // The portal asks to sign in again to switch organizations: a signed-in account with
      // several memberships chooses another without its password (the session proves it).
      const current =
        client.organizationId === null && details.session?.accountId
          ? await this.users.findById(details.session.accountId)
          : null;
      const members = current ? await this.users.usersOf(current.accountId) : [];
      const account = current && (await this.users.findAccount({ id: current.accountId }));
      if (account && members.length > 1) {
        await this.awaitChoice(req, res, account);
        return this.html(res, 200, await this.choicePage(details.uid, client.name, members));
      }
      return this.html(
        res,
        200,
        loginPage({ ...context, organizationName: await this.organizationName(client) }),
      );
    }
    const user = details.session?.accountId
      ? await this.users.findById(details.session.accountId)
      : null;
    if (!user) return this.fail(res, 400, 'Your session has ended; start again from the app.');
    if (!mayApprove(client, user)) {
      // Signed in (earlier, for another app) as a member of another organization.
      return this.html(
        res,
        403,
        loginPage({
          ...context,
          organizationName: await this.organizationName(client),
          error: `You are signed in as ${user.email}, which belongs to another organization than ${client.name}. Sign in with an account of its organization.`,
        }),
      );
    }
    const requested = param(details.params.scope).split(' ').filter(isScope);
    const allowed = new Set<string>(ROLE_SCOPES[user.role]);
    this.html(
      res,
      200,
      consentPage({
        ...context,
        organizationName: await this.organizationName(client, user),
        email: user.email,
        scopes: requested
          .filter((scope) => allowed.has(scope))
          .map((scope) => ({ scope, description: describeScope(scope) })),
        withheld: requested.filter((scope) => !allowed.has(scope)),
        role: user.role,
      }),
    );
  }

  private async login(req: Request, res: Response): Promise<void> {
    const details = await this.oauth.provider.interactionDetails(req, res);
    const client = await this.pageClient(param(details.params.client_id));
    if (!client) return this.fail(res, 400, 'The application is no longer registered.');
    this.allowFormTarget(res, param(details.params.redirect_uri));
    const email = field(req, 'email').trim();
    const password = field(req, 'password');
    const organizationName = await this.organizationName(client);
    const again = (status: number, error: string) =>
      this.html(
        res,
        status,
        loginPage({
          uid: details.uid,
          clientName: client.name,
          redirectUri: param(details.params.redirect_uri),
          organizationName,
          email,
          error,
          passwordReset: this.passwordReset,
        }),
      );

    const retryAfter = await this.users.loginThrottled(email, req.ip ?? 'unknown');
    if (retryAfter) {
      res.setHeader('Retry-After', String(retryAfter));
      return again(429, `Too many sign-in attempts. Try again in ${retryAfter} seconds.`);
    }
    const signedIn = email && password ? await this.users.verifyPassword(email, password) : null;
    if (!signedIn) return again(401, 'The email or password is not right.');
    // Clients act for the organization that registered them, and only its members may approve;
    // the portal is any of the account's organizations, chosen when it has several.
    const members = signedIn.users.filter((user) => mayApprove(client, user));
    if (!members.length) {
      return again(
        403,
        `${client.name} belongs to another organization; sign in with an account of that organization.`,
      );
    }
    if (members.length === 1) return this.finishLogin(req, res, members[0]!.id);
    // Several: the password is proven; the account waits in the interaction (server side) for
    // the choice, which is posted without the password.
    await this.awaitChoice(req, res, signedIn.account);
    return this.html(res, 200, await this.choicePage(details.uid, client.name, members));
  }

  /**
   * The account, proven, waits in the interaction (server side) for the organization, posted
   * without the password; with its password's fingerprint, so a reset or change in between
   * (which signs the person out everywhere) makes the choice fail.
   */
  private async awaitChoice(req: Request, res: Response, account: AccountRecord): Promise<void> {
    const proven: ProvenAccount = { id: account.id, password: hashToken(account.passwordHash) };
    await this.oauth.provider.interactionResult(
      req,
      res,
      toProviderRealm({ account: proven }),
      toProviderRealm({ mergeWithLastSubmission: false }),
    );
  }

  /** The organization chosen after the password: one of the proven account's members. */
  private async chooseOrganization(req: Request, res: Response): Promise<void> {
    const details = await this.oauth.provider.interactionDetails(req, res);
    const proven = (details.result as { account?: Partial<ProvenAccount> } | undefined)?.account;
    const client = await this.pageClient(param(details.params.client_id));
    const account =
      typeof proven?.id === 'string' ? await this.users.findAccount({ id: proven.id }) : null;
    if (!account || !client || proven?.password !== hashToken(account.passwordHash)) {
      return this.fail(res, 400, 'Sign in first; start again from the app.');
    }
    const accountId = account.id;
    const chosen = (await this.users.usersOf(accountId)).find(
      (user) => user.organizationId === field(req, 'organization') && mayApprove(client, user),
    );
    if (!chosen) return this.fail(res, 400, 'Choose one of your organizations.');
    return this.finishLogin(req, res, chosen.id);
  }

  private async finishLogin(req: Request, res: Response, userId: string): Promise<void> {
    const provider = this.oauth.provider;
    const session = await provider.Session.get(provider.createContext(req, res));
    const [was, next] = session.accountId
      ? await Promise.all([this.users.findById(session.accountId), this.users.findById(userId)])
      : [null, null];
    if (session.accountId !== userId && was && next && was.accountId === next.accountId) {
      // Another membership of the same account (the portal's switch): the signed-in session
      // becomes that member's, rather than the provider ending it and asking for the password
      // again; the previous member's grants end with their tokens, so nothing of that
      // membership is left signed in out of sight. The interaction remembers whose session it
      // began in and refuses a changed one, so it is told too. Another person's session is
      // the provider's to end.
      const interaction = await provider.interactionDetails(req, res);
      for (const { grantId } of Object.values(session.authorizations ?? {})) {
        if (!grantId) continue;
        await provider.AccessToken.revokeByGrantId(grantId);
        await (await provider.Grant.find(grantId))?.destroy();
      }
      session.accountId = userId;
      session.authorizations = {};
      await session.persist();
      if (interaction.session) {
        interaction.session.accountId = userId;
        await interaction.save(interaction.exp - Math.floor(Date.now() / 1000));
      }
    }
    const result: InteractionResults = { login: { accountId: userId } };
    await this.oauth.provider.interactionFinished(
      req,
      res,
      toProviderRealm(result),
      toProviderRealm({ mergeWithLastSubmission: false }),
    );
  }

  private async choicePage(
    uid: string,
    clientName: string,
    members: readonly { organizationId: string; role: string }[],
  ): Promise<string> {
    const organizations = await Promise.all(
      members.map(async (user) => ({
        id: user.organizationId,
        name: (await this.organizations.findById(user.organizationId))?.name ?? user.organizationId,
        role: user.role,
      })),
    );
    return organizationChoicePage({ uid, clientName, organizations });
  }

  private async consent(req: Request, res: Response): Promise<void> {
    const details = await this.oauth.provider.interactionDetails(req, res);
    if (field(req, 'decision') !== 'approve') {
      await this.oauth.provider.interactionFinished(
        req,
        res,
        toProviderRealm({
          error: 'access_denied',
          error_description: 'The user denied the request',
        }),
        toProviderRealm({ mergeWithLastSubmission: false }),
      );
      return;
    }
    const prompt = details.prompt as Prompt;
    const accountId = details.session?.accountId;
    if (prompt.name !== 'consent' || !accountId) {
      return this.fail(res, 400, 'Sign in first; start again from the app.');
    }
    const [user, client] = await Promise.all([
      this.users.findById(accountId),
      this.pageClient(param(details.params.client_id)),
    ]);
    if (!user || !client || !mayApprove(client, user)) {
      return this.fail(
        res,
        403,
        'Only members of the organization that registered this app can approve it.',
      );
    }
    const { Grant } = this.oauth.provider;
    const clientId = param(details.params.client_id);
    const grant =
      (details.grantId ? await Grant.find(details.grantId) : undefined) ??
      new Grant(toProviderRealm({ accountId, clientId }));
    const missing = (prompt.details.missingResourceScopes ?? {}) as Record<string, string[]>;
    const missingOIDCScope = (prompt.details.missingOIDCScope ?? []) as string[];
    if (missingOIDCScope.length) grant.addOIDCScope(missingOIDCScope.join(' '));
    // The grant never exceeds the member's role; what the role does not allow is recorded as
    // rejected, so oidc-provider does not ask again, and the token lacks it.
    const allowed = new Set<string>(ROLE_SCOPES[user.role]);
    for (const [indicator, scopes] of Object.entries(missing)) {
      const granted = scopes.filter((scope) => allowed.has(scope));
      const refused = scopes.filter((scope) => !allowed.has(scope));
      if (granted.length) grant.addResourceScope(indicator, granted.join(' '));
      if (refused.length) grant.rejectResourceScope(indicator, refused.join(' '));
    }
    const grantId = await grant.save();
    // An approval gives an app the member's data: the organization's audit log says so.
    if (!isPortalClient(clientId) && client.organizationId) {
      await this.audit.record(
        {
          kind: 'sign_in',
          organizationId: client.organizationId,
          credentialId: clientId,
          userId: user.id,
          ip: req.ip ? normalizeIp(req.ip) : null,
        },
        {
          action: 'oauth_client.approved',
          targetType: 'oauth_client',
          targetId: clientId,
          changes: {
            scopes: [...new Set(Object.values(missing).flat())].filter((s) => allowed.has(s)),
          },
        },
      );
    }
    await this.oauth.provider.interactionFinished(
      req,
      res,
      toProviderRealm({ consent: { grantId } }),
      toProviderRealm({ mergeWithLastSubmission: true }),
    );
  }

  /**
   * "Not you?": forgets who is signed in (the provider's session keeps no account) and starts
   * the same authorization request again, which then asks who is signing in. Forgetting first
   * matters: signing in as someone else over a live session would send the browser through the
   * provider's end-session confirmation instead. The interaction cookie must match (as for the
   * other forms), so another site cannot sign a user out.
   */
  private async switchAccount(req: Request, res: Response): Promise<void> {
    const provider = this.oauth.provider;
    const details = await provider.interactionDetails(req, res);
    const session = await provider.Session.get(provider.createContext(req, res));
    if (session.accountId) {
      // The grants it remembers are the previous member's too: the next member starts clean.
      session.accountId = undefined;
      session.authorizations = {};
      await session.persist();
    }
    const query = new URLSearchParams();
    for (const [key, value] of Object.entries(details.params)) {
      if (typeof value === 'string' && key !== 'prompt') query.set(key, value);
    }
    res.redirect(303, `${OAUTH_PATHS.authorization}?${query.toString()}`);
  }

  /** The organization the client acts for: its own, or for the portal the signed-in member's. */
  private async organizationName(
    client: PageClient,
    user?: { organizationId: string },
  ): Promise<string | null> {
    const id = client.organizationId ?? user?.organizationId;
    return id ? ((await this.organizations.findById(id))?.name ?? null) : null;
  }

  private async pageClient(id: string): Promise<PageClient | null> {
    if (isPortalClient(id)) return { name: PORTAL_CLIENT_NAME, organizationId: null };
    return this.clients.findById(id);
  }

  private allowFormTarget(res: Response, redirectUri: string): void {
    let target: string;
    try {
      const url = new URL(redirectUri);
      target = /^https?:$/.test(url.protocol) ? url.origin : url.protocol;
    } catch {
      return;
    }
    const csp = String(res.getHeader('Content-Security-Policy') ?? '');
    res.setHeader(
      'Content-Security-Policy',
      csp.replace(/form-action [^;]*/, `form-action 'self' ${target}`),
    );
  }

  private html(res: Response, status: number, body: string): void {
    const csp = String(res.getHeader('Content-Security-Policy') ?? '');
    if (/form-action 'none'/.test(csp)) {
      res.setHeader(
        'Content-Security-Policy',
        csp.replace("form-action 'none'", "form-action 'self'"),
      );
    }
    res.status(status).type('html').send(body);
  }

  private fail(res: Response, status: number, message: string): void {
    this.html(res, status, page('Cannot continue', `<h1>Cannot continue</h1><p>${message}</p>`));
  }

  /** Errors become a plain page: an expired or foreign interaction is the user's, not a 500. */
  private wrap(handler: (req: Request, res: Response) => Promise<void>) {
    return (req: Request, res: Response) => {
      handler(req, res).catch(
        (error: Error & { statusCode?: number; error_description?: string }) => {
          if (res.headersSent) return;
          const status = error.statusCode && error.statusCode < 500 ? error.statusCode : 500;
          if (status === 500)
            this.logger.error(`Interaction failed: ${error.name}: ${error.message}`);
          this.fail(
            res,
            status,
            status === 500
              ? 'Something went wrong on our side. Start again from the app.'
              : 'This sign-in request has expired or is not yours. Start again from the app.',
          );
        },
      );
    };
  }
}
