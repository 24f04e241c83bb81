/**
 * Two servers in one process, each on its own database: each authenticates against its own.
 * The bearer strategy is each app's own instance; one kept in passport's process-wide registry
 * would make the server started last answer for both.
 */
import { expectStatus, typedClient } from './support/api';
import { discover, oidc } from './support/oauth';
import { startServer, type TestServer } from './support/server';

let first: TestServer;
let second: TestServer;

beforeAll(async () => {
  // One after the other: the second app is built while the first is already serving.
  first = await startServer();
  second = await startServer();
});
afterAll(async () => {
  await first?.close();
  await second?.close();
});

async function organizationWithToken(server: TestServer, name: string) {
  const organization = await server.createOrganization({ name });
  const { token } = await server.createToken(organization.id, ['all']);
  return { organization, token };
}

describe('two servers in one process', () => {
  it('accept a personal access token on the server that made it and refuse it on the other', async () => {
    const a = await organizationWithToken(first, 'First School');
    const b = await organizationWithToken(second, 'Second School');

    const own = expectStatus(await typedClient(first, a.token).organization.retrieve(), 200);
    expect(own.body.name).toBe('First School');
    const ownOfSecond = await typedClient(second, b.token).organization.retrieve();
    expect(expectStatus(ownOfSecond, 200).body.name).toBe('Second School');

    const foreign = await typedClient(second, a.token).organization.retrieve();
    expect(expectStatus(foreign, 401).body.detail).toBe('The bearer token is not recognised');
    expect((await typedClient(first, b.token).organization.retrieve()).status).toBe(401);
  });

  it('accept an OAuth access token on the server that issued it and refuse it on the other', async () => {
    const { organization } = await organizationWithToken(first, 'OAuth School');
    const client = await first.createOAuthClient(organization.id, {
      type: 'confidential',
      grant_types: ['client_credentials'],
    });
    const tokens = await oidc.clientCredentialsGrant(
      await discover(first, client.id, client.client_secret),
      { scope: 'students:read' },
    );

    const onIssuer = await typedClient(first, tokens.access_token).students.list();
    expect(onIssuer.status).toBe(200);
    const foreign = await typedClient(second, tokens.access_token).students.list();
    expect(expectStatus(foreign, 401).body.detail).toBe('The bearer token is not recognised');
  });
});
