import * as client from 'openid-client';
import { DataSource } from 'typeorm';
import { idOfType } from '../src/graphql/global-id.js';
import { Browser, formFields, signIn } from './support/browser.js';
import { createUserWithToken, TEST_PASSWORD } from './support/fixtures.js';
import { createEvent, createOrganizer, mutate, registerFor, registrationOf } from './support/events.js';
import { get, graphql } from './support/http.js';
import { registerApp } from './support/oauth.js';
import { startTestApp, TestApp } from './support/test-app.js';

/**
 * Service accounts and grant_type=client_credentials, driven by openid-client as a backend would: an
 * organizer's owner makes one in the dashboard, the program gets tokens with its secret and acts for that
 * organizer alone, never as a person.
 */
let t: TestApp;
let owner: { user: { id: string; username: string }; token: string };
let admin: { user: { id: string; username: string }; token: string };
let ownerBrowser: Browser;
let adminBrowser: Browser;
let organizer: { id: string; slug: string };
let otherOrganizer: { id: string; slug: string };
let otherOwner: string;

beforeAll(async () => {
  t = await startTestApp();
  owner = await createUserWithToken(t);
  admin = await createUserWithToken(t);
  organizer = await createOrganizer(t, owner.token);
  await mutate(
    t,
    owner.token,
    'addOrganizerMember',
    { organizerId: organizer.id, username: admin.user.username, role: 'ADMIN' },
    'member { role }',
  );
  otherOwner = (await createUserWithToken(t)).token;
  otherOrganizer = await createOrganizer(t, otherOwner);
  ownerBrowser = new Browser(t.url);
  await signIn(ownerBrowser, owner.user.username, TEST_PASSWORD);
  adminBrowser = new Browser(t.url);
  await signIn(adminBrowser, admin.user.username, TEST_PASSWORD);
});
afterAll(() => t.close());

interface Created {
  id: string;
  clientId: string;
  clientSecret: string;
  page: string;
}

/** Posts the dashboard's form as `browser`: the answer. */
async function postCreate(browser: Browser, organizerId: string, name: string, scopes: string[]): Promise<Response> {
  const form = formFields(await (await browser.get('/service-accounts')).text());
  const body = new URLSearchParams({ _csrf: form._csrf!, organizer_id: idOfType(organizerId, 'Organizer')!, name });
  for (const s of scopes) body.append('scopes', s);
  return browser.post('/service-accounts', body);
}

/** Creates a service account in the dashboard as the owner, and reads its id and secret off the page shown once. */
async function createServiceAccount(scopes = ['api', 'read_api'], organizerId = organizer.id): Promise<Created> {
  const res = await postCreate(ownerBrowser, organizerId, `Nightly sync ${scopes.join('+')}`, scopes);
  expect(res.status).toBe(303);
  const location = res.headers.get('location')!;
  const id = /^\/service-accounts\/([0-9a-f-]{36})$/.exec(location)![1]!;
  const page = await (await ownerBrowser.get(location)).text();
  const clientSecret = /<code id="client-secret" class="secret">(agora_ocs_[0-9A-Za-z]+)<\/code\s*>/.exec(page)?.[1];
  const clientId = /<code id="client-id">([^<]+)<\/code>/.exec(page)?.[1];
  expect(clientSecret).toBeDefined();
  return { id, clientId: clientId!, clientSecret: clientSecret!, page };
}

async function configFor(clientId: string, clientSecret: string): Promise<client.Configuration> {
  return client.discovery(new URL(t.url), clientId, undefined, client.ClientSecretBasic(clientSecret), {
    execute: [client.allowInsecureRequests],
  });
}

/** The OAuth error openid-client reports for a refused token request. */
async function refusal(promise: Promise<unknown>): Promise<{ error: string; status: number }> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof client.ResponseBodyError) return { error: err.error, status: err.status };
    // A 401 comes with a Basic challenge, which openid-client reports apart.
    if (err instanceof client.WWWAuthenticateChallengeError) {
      const body = (await err.response.json()) as { error: string };
      return { error: body.error, status: err.status };
    }
    throw err;
  }
  throw new Error('the token request was not refused');
}

async function confirmAndPost(browser: Browser, path: string): Promise<Response> {
  const form = formFields(await (await browser.get(path)).text());
  return browser.post(path, { _csrf: form._csrf! });
}

describe('service accounts (client_credentials)', () => {
  let account: Created;
  let config: client.Configuration;

  beforeAll(async () => {
    account = await createServiceAccount();
    config = await configFor(account.clientId, account.clientSecret);
  });

  it('discovery lists client_credentials', async () => {
    const metadata = (await get<Record<string, string[]>>(t.url, '/.well-known/openid-configuration')).body;
    expect(metadata.grant_types_supported).toContain('client_credentials');
    expect(config.serverMetadata().grant_types_supported).toContain('client_credentials');
  });

  it('shows the secret once, and lists the service account on its organizer', async () => {
    expect(account.page).toContain('it will not be shown again');
    const again = await (await ownerBrowser.get(`/service-accounts/${account.id}`)).text();
    expect(again).not.toContain(account.clientSecret);
    expect(again).toContain(account.clientId);
    const list = await (await ownerBrowser.get('/service-accounts')).text();
    expect(list).toContain(`/service-accounts/${account.id}`);
  });

  it('issues an access token with every granted scope, and no refresh token nor id_token', async () => {
    const tokens = await client.clientCredentialsGrant(config);
    expect(tokens.access_token).toMatch(/^agora_oat_/);
    expect(tokens.token_type).toBe('bearer');
    expect(tokens.scope!.split(' ').sort()).toEqual(['api', 'read_api']);
    expect(tokens.refresh_token).toBeUndefined();
    expect(tokens.id_token).toBeUndefined();
    expect(tokens.expires_in).toBeGreaterThan(0);
  });

  it("lists and changes its organizer's events, sees its registrations and checks an attendee in", async () => {
    const { access_token: bearer } = await client.clientCredentialsGrant(config);
    const draft = await createEvent(t, owner.token, organizer.id, { publish: false, title: 'Draft night' });
    const published = await createEvent(t, owner.token, organizer.id, { title: 'Open night' });
    const guest = await createUserWithToken(t);
    const registration = registrationOf(await registerFor(t, guest.token, published));

    const listed = await graphql(
      t.url,
      `
        query ($slug: String!) {
          organizer(slug: $slug) {
            viewerRole
            events {
              nodes {
                id
                title
              }
            }
          }
        }
      `,
      {
        bearer,
        variables: { slug: organizer.slug },
      },
    );
    expect(listed.body.errors).toBeUndefined();
    const ids = listed.body.data!.organizer.events.nodes.map((e: { id: string }) => e.id);
    expect(ids).toEqual(expect.arrayContaining([draft.id, published.id]));
    // No member of the team: no role to show.
    expect(listed.body.data!.organizer.viewerRole).toBeNull();

    const changed = await graphql(
      t.url,
      `
        mutation ($input: UpdateEventInput!) {
          updateEvent(input: $input) {
            event {
              id
              title
            }
            userErrors {
              code
              message
            }
          }
        }
      `,
      { bearer, variables: { input: { eventId: draft.id, title: 'Renamed by the nightly sync' } } },
    );
    expect(changed.body.errors).toBeUndefined();
    expect(changed.body.data!.updateEvent).toEqual({ event: { id: draft.id, title: 'Renamed by the nightly sync' }, userErrors: [] });

    const registrations = await graphql(
      t.url,
      `
        query ($id: ID!) {
          event(id: $id) {
            registrations {
              nodes {
                id
                attendees {
                  id
                  email
                }
              }
            }
          }
        }
      `,
      { bearer, variables: { id: published.id } },
    );
    expect(registrations.body.errors).toBeUndefined();
    expect(registrations.body.data!.event.registrations.nodes.map((r: { id: string }) => r.id)).toEqual([registration.id]);

    const checkedIn = await graphql(
      t.url,
      `
        mutation ($input: CheckInAttendeeInput!) {
          checkInAttendee(input: $input) {
            attendee {
              id
              checkedInAt
            }
            userErrors {
              code
            }
          }
        }
      `,
      { bearer, variables: { input: { attendeeId: registration.attendees[0].id } } },
    );
    expect(checkedIn.body.errors).toBeUndefined();
    expect(checkedIn.body.data!.checkInAttendee.userErrors).toEqual([]);
    expect(checkedIn.body.data!.checkInAttendee.attendee.checkedInAt).not.toBeNull();
  });

  it("is refused another organizer's data exactly as a stranger is", async () => {
    const { access_token: bearer } = await client.clientCredentialsGrant(config);
    const theirs = await createEvent(t, otherOwner, otherOrganizer.id, { title: 'Their night' });
    const theirDraft = await createEvent(t, otherOwner, otherOrganizer.id, { publish: false });
    const stranger = (await createUserWithToken(t)).token;

    const asked = async (credentials: { bearer?: string; privateToken?: string }) => {
      const change = await graphql(
        t.url,
        `
          mutation ($input: UpdateEventInput!) {
            updateEvent(input: $input) {
              event {
                id
              }
              userErrors {
                code
              }
            }
          }
        `,
        { ...credentials, variables: { input: { eventId: theirs.id, title: 'Hijacked' } } },
      );
      const create = await graphql(
        t.url,
        `
          mutation ($input: CreateEventInput!) {
            createEvent(input: $input) {
              event {
                id
              }
              userErrors {
                code
              }
            }
          }
        `,
        {
          ...credentials,
          variables: {
            input: {
              organizerId: otherOrganizer.id,
              title: 'Not ours',
              startsAt: new Date(t.clock.now().getTime() + 86_400_000).toISOString(),
              endsAt: new Date(t.clock.now().getTime() + 90_000_000).toISOString(),
              timeZone: 'Europe/Paris',
              format: 'ONLINE',
              onlineUrl: 'https://meet.example.com/x',
            },
          },
        },
      );
      const registrations = await graphql(
        t.url,
        `
          query ($id: ID!) {
            event(id: $id) {
              registrations {
                nodes {
                  id
                }
              }
            }
          }
        `,
        {
          ...credentials,
          variables: { id: theirs.id },
        },
      );
      const draft = await graphql(
        t.url,
        `
          query ($id: ID!) {
            event(id: $id) {
              id
            }
          }
        `,
        { ...credentials, variables: { id: theirDraft.id } },
      );
      const codes = (body: { data?: unknown; errors?: { extensions?: Record<string, unknown> }[] }) =>
        JSON.stringify([body.data, (body.errors ?? []).map((e) => e.extensions?.code)]);
      return [codes(change.body), codes(create.body), codes(registrations.body), codes(draft.body)];
    };
    const serviceAccount = await asked({ bearer });
    expect(serviceAccount).toEqual(await asked({ privateToken: stranger }));
    expect(serviceAccount.join(' ')).toContain('FORBIDDEN');
  });

  it('acts for no person: viewer is refused, and its token cannot register for an event', async () => {
    const { access_token: bearer } = await client.clientCredentialsGrant(config);
    const viewer = await graphql(
      t.url,
      `
        {
          viewer {
            id
            username
          }
        }
      `,
      { bearer },
    );
    expect(viewer.status).toBe(200);
    expect(viewer.body.data).toBeNull();
    expect(viewer.body.errors![0]!.extensions!.code).toBe('FORBIDDEN');

    const event = await createEvent(t, owner.token, organizer.id);
    const registered = await graphql(
      t.url,
      `
        mutation ($input: RegisterForEventInput!) {
          registerForEvent(input: $input) {
            registration {
              id
            }
            userErrors {
              code
            }
          }
        }
      `,
      {
        bearer,
        variables: {
          input: { eventId: event.id, ticketTypeId: event.ticketTypeId, attendees: [{ name: 'Bot', email: 'bot@example.com' }] },
        },
      },
    );
    expect(registered.body.data?.registerForEvent?.registration ?? null).toBeNull();

    const userinfo = await fetch(`${t.url}/oauth/userinfo`, { headers: { authorization: `Bearer ${bearer}` } });
    expect(userinfo.status).toBe(403);
  });

  it('narrows the scope on request: a read_api token reads but cannot change anything', async () => {
    const tokens = await client.clientCredentialsGrant(config, { scope: 'read_api' });
    expect(tokens.scope).toBe('read_api');
    const event = await createEvent(t, owner.token, organizer.id, { publish: false });
    const read = await graphql(
      t.url,
      `
        query ($id: ID!) {
          event(id: $id) {
            id
          }
        }
      `,
      { bearer: tokens.access_token, variables: { id: event.id } },
    );
    expect(read.body.data!.event).toEqual({ id: event.id });
    const write = await graphql(
      t.url,
      `
        mutation ($input: UpdateEventInput!) {
          updateEvent(input: $input) {
            event {
              id
            }
          }
        }
      `,
      { bearer: tokens.access_token, variables: { input: { eventId: event.id, title: 'No' } } },
    );
    expect(write.status).toBe(403);
    expect(write.body.error).toBe('insufficient_scope');
  });

  it('refuses unknown scopes, scopes of a person, and scopes beyond what was granted (invalid_scope)', async () => {
    for (const scope of ['nonsense', 'openid', 'offline_access', 'api profile']) {
      expect(await refusal(client.clientCredentialsGrant(config, { scope }))).toEqual({ error: 'invalid_scope', status: 400 });
    }
    const readOnly = await createServiceAccount(['read_api']);
    const readOnlyConfig = await configFor(readOnly.clientId, readOnly.clientSecret);
    expect((await client.clientCredentialsGrant(readOnlyConfig)).scope).toBe('read_api');
    expect(await refusal(client.clientCredentialsGrant(readOnlyConfig, { scope: 'api' }))).toEqual({ error: 'invalid_scope', status: 400 });
  });

  it('refuses an ordinary application (unauthorized_client) and a wrong secret (invalid_client)', async () => {
    const ordinary = await registerApp(t, owner.user.id);
    const ordinaryConfig = await configFor(ordinary.clientId, ordinary.clientSecret);
    expect(await refusal(client.clientCredentialsGrant(ordinaryConfig))).toEqual({ error: 'unauthorized_client', status: 400 });
    const wrong = await configFor(account.clientId, `agora_ocs_${'x'.repeat(43)}`);
    expect(await refusal(client.clientCredentialsGrant(wrong))).toEqual({ error: 'invalid_client', status: 401 });
  });

  it('describes its token at introspection with the client as subject', async () => {
    const { access_token: token } = await client.clientCredentialsGrant(config);
    const described = await client.tokenIntrospection(config, token);
    expect(described.active).toBe(true);
    expect(described.sub).toBe(account.clientId);
    expect(described.username).toBeUndefined();
  });

  it('is told to the organizer’s owners and admins (security notice), and the token is logged', async () => {
    const rows = (await t
      .get(DataSource)
      .query(`SELECT data FROM pgboss.job WHERE name = 'security-notices' AND data->'notice'->>'kind' = 'service-account-created'`)) as {
      data: { userId: string; notice: { name: string; by: string } };
    }[];
    const told = rows.filter((r) => r.data.notice.name === 'Nightly sync api+read_api').map((r) => r.data.userId);
    expect(told.sort()).toEqual([owner.user.id, admin.user.id].sort());
    expect(rows[0]!.data.notice.by).toBe(owner.user.username);
  });
});

describe('managing service accounts in the dashboard', () => {
  it('a non-owner (an admin) can neither create nor see one', async () => {
    const created = await createServiceAccount(['read_api']);
    const res = await postCreate(adminBrowser, organizer.id, 'Sneaky', ['api']);
    expect(res.status).toBe(403);
    expect((await adminBrowser.get(`/service-accounts/${created.id}`)).status).toBe(404);
    expect((await adminBrowser.get(`/service-accounts/${created.id}/delete`)).status).toBe(404);
    // Nor for an organizer the owner does not own.
    expect((await postCreate(ownerBrowser, otherOrganizer.id, 'Not mine', ['api'])).status).toBe(403);
  });

  it('refuses a person’s scopes on the form (422)', async () => {
    const res = await postCreate(ownerBrowser, organizer.id, 'Greedy', ['api', 'openid']);
    expect(res.status).toBe(422);
    expect(await res.text()).toContain('A service account may hold only');
  });

  it('revoking its tokens ends the live ones at once; its secret gets new ones', async () => {
    const account = await createServiceAccount();
    const config = await configFor(account.clientId, account.clientSecret);
    const { access_token: bearer } = await client.clientCredentialsGrant(config);
    expect(
      (
        await graphql(
          t.url,
          `
            query ($s: String!) {
              organizer(slug: $s) {
                id
              }
            }
          `,
          { bearer, variables: { s: organizer.slug } },
        )
      ).status,
    ).toBe(200);
    expect((await confirmAndPost(ownerBrowser, `/service-accounts/${account.id}/revoke`)).status).toBe(303);
    expect(
      (
        await graphql(
          t.url,
          `
            {
              __typename
            }
          `,
          { bearer },
        )
      ).status,
    ).toBe(401);
    const fresh = await client.clientCredentialsGrant(config);
    expect(
      (
        await graphql(
          t.url,
          `
            {
              __typename
            }
          `,
          { bearer: fresh.access_token },
        )
      ).status,
    ).toBe(200);
  });

  it('deleting the service account kills its live token at once and its secret with it', async () => {
    const account = await createServiceAccount();
    const config = await configFor(account.clientId, account.clientSecret);
    const { access_token: bearer } = await client.clientCredentialsGrant(config);
    const event = await createEvent(t, owner.token, organizer.id, { publish: false });
    const read = () =>
      graphql(
        t.url,
        `
          query ($id: ID!) {
            event(id: $id) {
              id
            }
          }
        `,
        { bearer, variables: { id: event.id } },
      );
    expect((await read()).body.data!.event).toEqual({ id: event.id });

    const deleted = await confirmAndPost(ownerBrowser, `/service-accounts/${account.id}/delete`);
    expect(deleted.status).toBe(303);
    expect(deleted.headers.get('location')).toBe('/service-accounts');

    expect((await read()).status).toBe(401);
    expect(await refusal(client.clientCredentialsGrant(config))).toEqual({ error: 'invalid_client', status: 401 });
    expect((await ownerBrowser.get(`/service-accounts/${account.id}`)).status).toBe(404);
  });
});

describe('managing service accounts through GraphQL', () => {
  const CREATE = `mutation($input: CreateServiceAccountInput!) {
    createServiceAccount(input: $input) { serviceAccount { clientId name scopes } clientSecret userErrors { code field } } }`;
  const LIST = `query($slug: String!) { organizer(slug: $slug) { serviceAccounts { clientId scopes } } }`;

  it('an owner creates, lists and deletes one; the secret works until the deletion', async () => {
    const created = await graphql(t.url, CREATE, {
      privateToken: owner.token,
      variables: { input: { organizerId: organizer.id, name: 'Badge printer', scopes: ['read_api'] } },
    });
    expect(created.body.errors).toBeUndefined();
    const { serviceAccount, clientSecret } = created.body.data!.createServiceAccount;
    expect(serviceAccount).toMatchObject({ name: 'Badge printer', scopes: ['read_api'] });
    const listed = await graphql(t.url, LIST, { privateToken: owner.token, variables: { slug: organizer.slug } });
    expect(listed.body.data!.organizer.serviceAccounts).toContainEqual({ clientId: serviceAccount.clientId, scopes: ['read_api'] });

    const config = await configFor(serviceAccount.clientId, clientSecret);
    const { access_token: bearer } = await client.clientCredentialsGrant(config);
    // The service account itself manages no service accounts.
    const itself = await graphql(t.url, LIST, { bearer, variables: { slug: organizer.slug } });
    expect(itself.body.errors![0]!.extensions!.code).toBe('FORBIDDEN');

    const deleted = await graphql(
      t.url,
      `
        mutation ($input: DeleteServiceAccountInput!) {
          deleteServiceAccount(input: $input) {
            deletedClientId
            userErrors {
              code
            }
          }
        }
      `,
      { privateToken: owner.token, variables: { input: { clientId: serviceAccount.clientId } } },
    );
    expect(deleted.body.data!.deleteServiceAccount).toEqual({ deletedClientId: serviceAccount.clientId, userErrors: [] });
    expect(
      (
        await graphql(
          t.url,
          `
            {
              __typename
            }
          `,
          { bearer },
        )
      ).status,
    ).toBe(401);
  });

  it('refuses an admin and a person’s scopes', async () => {
    const asAdmin = await graphql(t.url, CREATE, {
      privateToken: admin.token,
      variables: { input: { organizerId: organizer.id, name: 'Sneaky', scopes: ['api'] } },
    });
    expect(asAdmin.body.errors![0]!.extensions!.code).toBe('FORBIDDEN');
    expect(
      (await graphql(t.url, LIST, { privateToken: admin.token, variables: { slug: organizer.slug } })).body.errors![0]!.extensions!.code,
    ).toBe('FORBIDDEN');
    const greedy = await graphql(t.url, CREATE, {
      privateToken: owner.token,
      variables: { input: { organizerId: organizer.id, name: 'Greedy', scopes: ['api', 'offline_access'] } },
    });
    expect(greedy.body.data!.createServiceAccount).toEqual({
      serviceAccount: null,
      clientSecret: null,
      userErrors: [{ code: 'INVALID_SCOPES', field: ['input', 'scopes'] }],
    });
  });
});
