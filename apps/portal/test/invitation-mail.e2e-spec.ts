/**
 * Invitations by email in Chromium (issue 46): an admin of a server with `SMTP_URL` invites an
 * address; the portal says it was sent and shows no link; the mail arrives at the local mail
 * catcher (apps/webhook-inspector, a real SMTP server on loopback); the invitee opens its link,
 * sets a password, signs in to the portal and is a member. A member who forgot their password
 * resets it from the sign-in page through a mailed link, which signs out their other browser;
 * a member changes their email, which takes effect once the new address confirms it.
 */
import type { AddressInfo } from 'node:net';
import { startTestServer, type TestServer } from '@platform/server/testing';
import { createMailCatcher, type MailCatcher } from '@platform/webhook-inspector';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { expectPortalBuilt, launchChromium, loopbackContext, screenshot } from './browser';
import { expectAccessible } from './product-checks';

const ADMIN_EMAIL = 'head@mail-school.test';
const INVITEE_EMAIL = 'new.teacher@mail-school.test';
const PASSWORD = 'correct horse battery staple';

let catcher: MailCatcher;
let server: TestServer;
let browser: Browser;
const contexts: BrowserContext[] = [];
const refused: string[] = [];

beforeAll(async () => {
  expectPortalBuilt();
  catcher = createMailCatcher();
  await new Promise<void>((resolve) => catcher.smtp.listen(0, '127.0.0.1', resolve));
  const { port } = catcher.smtp.server.address() as AddressInfo;
  server = await startTestServer({
    postgresAdminUrl: process.env.TEST_DATABASE_URL || undefined,
    redisUrl: process.env.TEST_REDIS_URL || undefined,
    env: {
      SMTP_URL: `smtp://127.0.0.1:${port}`,
      MAIL_FROM: 'Mail School <no-reply@mail-school.test>',
    },
  });
  const organization = await server.createOrganization({ name: 'Mail School' });
  await server.createUser(organization.id, ADMIN_EMAIL, PASSWORD, { role: 'admin' });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
  await server?.close();
  await new Promise<void>((resolve) => catcher?.smtp.close(() => resolve()));
});

afterEach(() => expect(refused).toEqual([]));

async function newPage(): Promise<Page> {
  const context = await loopbackContext(browser, refused);
  contexts.push(context);
  return context.newPage();
}

async function signIn(page: Page, email: string, password: string, pathname: string) {
  await page.goto(`${server.url}/portal${pathname}`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/oauth\/interaction\//);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`${server.url}/portal${pathname}`);
}

async function mailTo(address: string, timeoutMs = 15_000, subject = '') {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = catcher
      .messages()
      .find((m) => m.to.includes(address) && m.subject.includes(subject));
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no mail to ${address}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('the invitation goes by email only; the invitee joins from the link in it', async () => {
  const admin = await newPage();
  await signIn(admin, ADMIN_EMAIL, PASSWORD, '/members');
  await admin.getByLabel('Email').fill(INVITEE_EMAIL);
  await admin.getByLabel('Role', { exact: true }).selectOption('developer');
  await admin.getByRole('button', { name: 'Create invitation' }).click();
  await admin.getByRole('heading', { name: `Invitation for ${INVITEE_EMAIL} sent` }).waitFor();
  expect(await admin.getByLabel('Invitation link', { exact: true }).count()).toBe(0);
  await expectAccessible(admin, 'members (invitation sent)');

  const mail = await mailTo(INVITEE_EMAIL);
  expect(mail.subject).toContain('invited you to Mail School');
  const link = /https?:\/\/\S+\/invitations\/accept\?token=\S+/.exec(mail.text)![0];
  expect(link.startsWith(server.url)).toBe(true);

  const invitee = await newPage();
  await invitee.goto(link);
  await invitee.getByRole('heading', { level: 1, name: 'Join your organization' }).waitFor();
  await invitee.locator('#password').fill(PASSWORD);
  await invitee.locator('#password_confirmation').fill(PASSWORD);
  await invitee.getByRole('button', { name: 'Accept invitation' }).click();
  await invitee.waitForURL(`${server.url}/portal/`);
  await signIn(invitee, INVITEE_EMAIL, PASSWORD, '/members');
  await invitee.getByRole('row', { name: new RegExp(INVITEE_EMAIL) }).waitFor();
});

test('invited by a second organization, the same person joins with their password and switches between the two', async () => {
  const second = await server.createOrganization({ name: 'Second School' });
  const secondAdmin = 'head@second-school.test';
  await server.createUser(second.id, secondAdmin, PASSWORD, { role: 'admin' });
  const person = await newPage();
  await signIn(person, INVITEE_EMAIL, PASSWORD, '/members');

  const admin = await newPage();
  await signIn(admin, secondAdmin, PASSWORD, '/members');
  await admin.getByLabel('Email').fill(INVITEE_EMAIL);
  await admin.getByLabel('Role', { exact: true }).selectOption('viewer');
  await admin.getByRole('button', { name: 'Create invitation' }).click();
  await admin.getByRole('heading', { name: `Invitation for ${INVITEE_EMAIL} sent` }).waitFor();
  const mail = await mailTo(INVITEE_EMAIL, 15_000, 'Second School');
  const link = /https?:\/\/\S+\/invitations\/accept\?token=\S+/.exec(mail.text)![0];

  // The address has an account: the same page, where its password joins it (nothing new is set).
  await person.goto(link);
  await person.getByRole('heading', { level: 1, name: 'Join your organization' }).waitFor();
  await person.locator('#password').fill(PASSWORD);
  await person.locator('#password_confirmation').fill(PASSWORD);
  await person.getByRole('button', { name: 'Accept invitation' }).click();
  await person.waitForURL(`${server.url}/portal/`);

  await person.getByRole('button', { name: 'Switch organization' }).click();
  await person.getByLabel('Second School (viewer)').check();
  await person.getByRole('button', { name: 'Continue' }).click();
  await person.waitForFunction(() => document.title.includes('Second School'));
  // Each organization sees only its own members.
  await person.goto(`${server.url}/portal/members`);
  await person.getByRole('row', { name: new RegExp(secondAdmin) }).waitFor();
  expect(await person.getByRole('row', { name: new RegExp(ADMIN_EMAIL) }).count()).toBe(0);
});

test('a forgotten password is reset by email from the sign-in page, ending the old session', async () => {
  const email = 'forgetful@mail-school.test';
  const organization = await server.createOrganization({ name: 'Forgetful School' });
  await server.createUser(organization.id, email, PASSWORD, { role: 'viewer' });
  const before = await newPage();
  await signIn(before, email, PASSWORD, '/account');

  const page = await newPage();
  await page.goto(`${server.url}/portal/account`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/oauth\/interaction\//);
  await page.getByRole('link', { name: 'Forgot your password?' }).click();
  await page.getByRole('heading', { level: 1, name: 'Reset your password' }).waitFor();
  await expectAccessible(page, 'password reset request');
  await page.getByLabel('Email').fill(email);
  await page.getByRole('button', { name: 'Send me a link' }).click();
  await page.getByRole('heading', { level: 1, name: 'Check your email' }).waitFor();

  const mail = await mailTo(email);
  expect(mail.subject).toBe('Reset your Platform password for Forgetful School');
  const link = /https?:\/\/\S+\/password-reset\/new\?token=[\w-]+/.exec(mail.text)![0];
  await page.goto(link);
  await page.getByRole('heading', { level: 1, name: 'Choose a new password' }).waitFor();
  await expectAccessible(page, 'password reset form');
  const next = 'maple river copper lantern';
  await page.getByLabel('New password (at least 12 characters)').fill(next);
  await page.getByLabel('New password again').fill(next);
  await page.getByRole('button', { name: 'Set my password' }).click();
  await page.getByRole('heading', { level: 1, name: 'Your password is changed' }).waitFor();
  await page.getByRole('link', { name: 'Sign in' }).click();
  await page.waitForURL(`${server.url}/portal/`);

  // The browser signed in with the old password is signed out: the portal asks again.
  await before.reload();
  await before.getByRole('button', { name: 'Sign in' }).waitFor();
  // The new password signs in.
  await signIn(page, email, next, '/account');
  await page.getByText(email).first().waitFor();
});

test('a member changes their email from the account page; it changes once the new address confirms', async () => {
  const email = 'moving@mail-school.test';
  const next = 'moved@mail-school.test';
  const organization = await server.createOrganization({ name: 'Moving School' });
  await server.createUser(organization.id, email, PASSWORD, { role: 'viewer' });
  const page = await newPage();
  await signIn(page, email, PASSWORD, '/account');
  await page.getByLabel('New email').fill(next);
  await page.getByLabel('Your password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Send a confirmation link' }).click();
  await page.getByText(`We sent a link to ${next}.`).waitFor();
  await expectAccessible(page, 'account (email change sent)');
  await screenshot(page, 'account');

  const mail = await mailTo(next);
  expect(mail.subject).toBe('Confirm your new Platform email');
  const link = /https?:\/\/\S+\/email-change\?token=[\w-]+/.exec(mail.text)![0];
  const confirmPage = await newPage();
  await confirmPage.goto(link);
  await confirmPage.getByRole('heading', { level: 1, name: 'Confirm your new email' }).waitFor();
  await expectAccessible(confirmPage, 'email change confirmation');
  await confirmPage.getByRole('button', { name: 'Confirm my new email' }).click();
  await confirmPage.getByRole('heading', { level: 1, name: 'Your email is changed' }).waitFor();
  expect((await mailTo(email)).subject).toBe('Your Platform email was changed');

  await page.reload();
  await page.getByText(next, { exact: true }).waitFor();
});
