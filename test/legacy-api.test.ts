import { execFileSync } from 'node:child_process';
import { idOfType } from '../src/graphql/global-id.js';
import { LegacyApiUsageService } from '../src/legacy-api/legacy-api-usage.service.js';
import { createUserWithToken } from './support/fixtures.js';
import { insertEvents, uniqueSlug } from './support/events.js';
import { graphql, rest } from './support/http.js';
import { ROOT, runCli } from './support/processes.js';
import { startTestApp, TEST_SECRET_KEY, TestApp } from './support/test-app.js';

const DAY = 86_400_000;
const UUID = /^[0-9a-f-]{36}$/;

describe('Legacy REST API', () => {
  let t: TestApp;
  let owner: { token: string; username: string; id: string };
  let reader: { token: string };
  let stranger: { token: string; username: string };
  let organizer: { id: string; slug: string };

  const call = (method: string, path: string, token?: string, body?: unknown, headers?: Record<string, string>) =>
    rest(t.url, method, path, { ...(token ? { privateToken: token } : {}), body, headers });

  const newEvent = async (overrides: Record<string, unknown> = {}, publish = true) => {
    const startsAt = new Date(t.clock.now().getTime() + 7 * DAY);
    const created = await call('POST', '/api/events', owner.token, {
      organizer_id: organizer.id,
      title: 'REST meetup',
      starts_at: startsAt.toISOString(),
      ends_at: new Date(startsAt.getTime() + 7_200_000).toISOString(),
      time_zone: 'Europe/Paris',
      format: 'in_person',
      venue: { name: 'Hall', city: 'Lyon', country: 'FR' },
      capacity: 100,
      ...overrides,
    });
    expect(created.status).toBe(201);
    const ticket = await call('POST', `/api/events/${created.body.id}/ticket_types`, owner.token, {
      name: 'Standard',
      price: { amount: 0, currency: 'EUR' },
    });
    expect(ticket.status).toBe(201);
    if (publish) expect((await call('POST', `/api/events/${created.body.id}/publish`, owner.token)).status).toBe(200);
    return { ...created.body, ticketTypeId: ticket.body.id as string };
  };

  const register = (token: string, event: { id: string; ticketTypeId: string }, attendees = 1) =>
    call('POST', `/api/events/${event.id}/registrations`, token, {
      ticket_type_id: event.ticketTypeId,
      attendees: Array.from({ length: attendees }, (_, i) => ({ name: `Guest ${i + 1}`, email: `guest${i + 1}@example.com` })),
    });

  beforeAll(async () => {
    t = await startTestApp({ LEGACY_API_SUNSET: '2028-06-30' });
    const o = await createUserWithToken(t);
    owner = { token: o.token, username: o.user.username, id: o.user.id };
    reader = { token: (await createUserWithToken(t, ['read_api'])).token };
    const s = await createUserWithToken(t);
    stranger = { token: s.token, username: s.user.username };
    const created = await call('POST', '/api/organizers', owner.token, {
      slug: uniqueSlug('rest'),
      name: 'REST Org',
      website_url: 'https://rest.example',
    });
    expect(created.status).toBe(201);
    organizer = created.body;
  });
  afterAll(() => t.close());

  describe('deprecation', () => {
    it.each([
      ['a public read', 'GET', '/api/events', undefined, 200],
      ['a failed authentication', 'GET', '/api/user', 'agora_pat_nonsense', 401],
      ['a missing resource', 'GET', '/api/events/no-such-event', undefined, 404],
      ['a malformed query', 'GET', '/api/events?per_page=1000', undefined, 400],
    ])('marks %s as deprecated, with the sunset date and the migration guide', async (_label, method, path, token, status) => {
      const res = await call(method, path, token);
      expect(res.status).toBe(status);
      expect(res.headers.get('deprecation')).toBe('@1795305600');
      expect(res.headers.get('sunset')).toBe('Fri, 30 Jun 2028 00:00:00 GMT');
      expect(res.headers.get('link')).toContain(`<${t.url}/api/migration-guide>; rel="deprecation"; type="text/markdown"`);
    });

    it('serves the migration guide, which maps every endpoint of the OpenAPI document to GraphQL', async () => {
      const guide = await call('GET', '/api/migration-guide');
      expect(guide.status).toBe(200);
      expect(guide.headers.get('content-type')).toContain('text/markdown');
      const doc = (await call('GET', '/api/openapi.json')).body;
      for (const [path, operations] of Object.entries<Record<string, unknown>>(doc.paths)) {
        for (const method of Object.keys(operations)) {
          const restPath = path.replace(/\{(\w+)\}/g, ':$1').replace(':slug', ':slug');
          expect(`${guide.text}\n${method.toUpperCase()} ${restPath}`).toContain(`\`${method.toUpperCase()} ${restPath}`);
        }
      }
    });

    it('publishes a valid OpenAPI 3 document generated from the controllers', async () => {
      const res = await call('GET', '/api/openapi.json');
      expect(res.status).toBe(200);
      const doc = res.body;
      // swagger-parser is ESM that Jest's module loader cannot run: validate in a plain Node process.
      const validation = `import P from '@apidevtools/swagger-parser'; let s = ''; for await (const c of process.stdin) s += c; await P.validate(JSON.parse(s)); console.log('valid');`;
      expect(
        execFileSync('node', ['--input-type=module', '-e', validation], { cwd: ROOT, input: JSON.stringify(doc), encoding: 'utf8' }).trim(),
      ).toBe('valid');
      expect(doc.openapi).toMatch(/^3\./);
      expect(Object.keys(doc.paths).sort()).toEqual(
        [
          '/api/attendees/{id}/check_in',
          '/api/attendees/{id}/undo_check_in',
          '/api/check_ins',
          '/api/events',
          '/api/events/{id}',
          '/api/events/{id}/cancel',
          '/api/events/{id}/publish',
          '/api/events/{id}/registrations',
          '/api/events/{id}/ticket_types',
          '/api/organizers',
          '/api/organizers/{slug}',
          '/api/organizers/{slug}/events',
          '/api/organizers/{slug}/members',
          '/api/registrations',
          '/api/registrations/{id}',
          '/api/registrations/{id}/cancel',
          '/api/ticket_types/{id}',
          '/api/user',
        ].sort(),
      );
      expect(doc.paths['/api/events'].post.requestBody.content['application/json'].schema).toEqual({
        $ref: '#/components/schemas/CreateEvent',
      });
      expect(doc.components.schemas.Event.properties.starts_at).toMatchObject({ type: 'string' });
      expect(Object.values<any>(doc.paths).every((ops) => Object.values<any>(ops).every((op) => op.deprecated === true))).toBe(true);
      expect(Object.values<any>(doc.paths).every((ops) => Object.values<any>(ops).every((op) => op.responses['429'] !== undefined))).toBe(
        true,
      );
    });
  });

  describe('authentication, the same contract as /graphql', () => {
    it('answers GET /api/user for a token, 401 with the exact body without one', async () => {
      const me = await call('GET', '/api/user', owner.token);
      expect(me.body).toEqual({ id: owner.id, username: owner.username, name: expect.any(String) });
      const bearer = await rest(t.url, 'GET', '/api/user', { bearer: owner.token });
      expect(bearer.status).toBe(200);
      const anonymous = await call('GET', '/api/user');
      expect(anonymous.status).toBe(401);
      expect(anonymous.text).toBe('{"message":"401 Unauthorized"}');
      expect(anonymous.headers.get('www-authenticate')).toBe(
        `Bearer scope="api offline_access", resource_metadata="${t.url}/.well-known/oauth-protected-resource"`,
      );
      const both = await rest(t.url, 'GET', '/api/user', { privateToken: owner.token, bearer: owner.token });
      expect(both.status).toBe(401);
    });

    it('lets read_api tokens GET but not write', async () => {
      expect((await call('GET', '/api/user', reader.token)).status).toBe(200);
      const write = await call('POST', '/api/organizers', reader.token, { slug: uniqueSlug('ro'), name: 'Read only' });
      expect(write.status).toBe(403);
      expect(write.body).toEqual({ message: '403 Forbidden', error: 'insufficient_scope' });
      expect(write.headers.get('www-authenticate')).toBe(
        `Bearer error="insufficient_scope", scope="api", resource_metadata="${t.url}/.well-known/oauth-protected-resource"`,
      );
    });

    it('refuses anonymous writes and an invalid token even on a public read', async () => {
      expect((await call('POST', '/api/organizers', undefined, { slug: 'x', name: 'x' })).status).toBe(401);
      expect((await call('GET', '/api/events', 'agora_pat_bogus')).status).toBe(401);
    });
  });

  describe('organizers', () => {
    it('creates, reads and updates an organizer, with field-level errors', async () => {
      expect(organizer).toMatchObject({
        id: expect.stringMatching(UUID),
        name: 'REST Org',
        website_url: 'https://rest.example',
        created_at: expect.any(String),
      });
      expect((await call('GET', `/api/organizers/${organizer.slug}`)).body).toEqual(organizer);
      expect((await call('GET', '/api/organizers/nobody-here')).status).toBe(404);

      const malformed = await call('POST', '/api/organizers', owner.token, { slug: 42 });
      expect(malformed.status).toBe(400);
      expect(malformed.body).toEqual({ message: '400 Bad Request', errors: { slug: ['must be a string'], name: ['must be a string'] } });
      const invalid = await call('POST', '/api/organizers', owner.token, { slug: 'Not OK', name: 'x' });
      expect(invalid.status).toBe(422);
      expect(invalid.body).toMatchObject({ code: 'INVALID_SLUG', errors: { slug: [expect.stringContaining('lowercase')] } });
      const taken = await call('POST', '/api/organizers', owner.token, { slug: organizer.slug, name: 'Again' });
      expect(taken.status).toBe(409);
      expect(taken.body).toEqual({
        message: 'This slug is already taken.',
        code: 'SLUG_TAKEN',
        errors: { slug: ['This slug is already taken.'] },
      });

      expect((await call('PATCH', `/api/organizers/${organizer.slug}`, stranger.token, { name: 'Mine now' })).status).toBe(403);
      const renamed = await call('PATCH', `/api/organizers/${organizer.slug}`, owner.token, { description: 'Talks in Lyon' });
      expect(renamed.body.description).toBe('Talks in Lyon');
      const badUrl = await call('PATCH', `/api/organizers/${organizer.slug}`, owner.token, { website_url: 'ftp://x' });
      expect(badUrl.status).toBe(422);
      expect(badUrl.body.errors).toEqual({ website_url: ['Must be an absolute http or https URL.'] });
    });

    it('shows the team to members only', async () => {
      const members = await call('GET', `/api/organizers/${organizer.slug}/members`, owner.token);
      expect(members.body).toEqual([
        { user: { id: owner.id, username: owner.username, name: expect.any(String) }, role: 'owner', created_at: expect.any(String) },
      ]);
      expect((await call('GET', `/api/organizers/${organizer.slug}/members`, stranger.token)).status).toBe(403);
      expect((await call('GET', `/api/organizers/${organizer.slug}/members`)).status).toBe(401);
    });
  });

  describe('events', () => {
    it('runs the lifecycle: draft, visible to the organizer only, published, cancelled; deletes drafts only', async () => {
      const draft = await newEvent({ title: 'Draft one' }, false);
      expect(draft).toMatchObject({
        status: 'draft',
        format: 'in_person',
        venue: { name: 'Hall', city: 'Lyon', country: 'FR', address: null },
        phase: 'upcoming',
      });
      expect((await call('GET', `/api/events/${draft.id}`)).status).toBe(404);
      expect((await call('GET', `/api/events/${draft.slug}`, stranger.token)).status).toBe(404);
      expect((await call('GET', `/api/events/${draft.slug}`, owner.token)).body.id).toBe(draft.id);
      expect((await call('DELETE', `/api/events/${draft.id}`, owner.token)).status).toBe(204);
      expect((await call('GET', `/api/events/${draft.id}`, owner.token)).status).toBe(404);

      const event = await newEvent();
      expect((await call('GET', `/api/events/${event.id}`)).body.status).toBe('published');
      const notDraft = await call('DELETE', `/api/events/${event.id}`, owner.token);
      expect(notDraft.status).toBe(409);
      expect(notDraft.body.code).toBe('EVENT_NOT_DRAFT');
      expect((await call('POST', `/api/events/${event.id}/cancel`, stranger.token)).status).toBe(403);
      expect((await call('POST', `/api/events/${event.id}/cancel`, owner.token)).body.status).toBe('cancelled');
      expect((await call('POST', '/api/events/00000000-0000-4000-8000-000000000000/publish', owner.token)).status).toBe(404);
    });

    it('validates bodies: 400 for the wrong shape, 422 for values the rules refuse, fields in snake_case', async () => {
      const shape = await call('POST', '/api/events', owner.token, {
        organizer_id: organizer.id,
        title: 'x',
        starts_at: 'soon',
        ends_at: 'later',
        time_zone: 'UTC',
        format: 'zoom',
      });
      expect(shape.status).toBe(400);
      expect(Object.keys(shape.body.errors).sort()).toEqual(['ends_at', 'format', 'starts_at']);
      expect(shape.body.errors.format).toEqual(['must be in_person, online or hybrid']);
      const rules = await call('POST', '/api/events', owner.token, {
        organizer_id: organizer.id,
        title: 'Backwards',
        starts_at: '2030-01-02T10:00:00Z',
        ends_at: '2030-01-01T10:00:00Z',
        time_zone: 'UTC',
        format: 'online',
      });
      expect(rules.status).toBe(422);
      expect(rules.body).toMatchObject({ code: 'INVALID_TIME_RANGE', errors: { ends_at: ['The event must end after it starts.'] } });
      const several = await call('POST', '/api/events', owner.token, {
        organizer_id: organizer.id,
        title: ' ',
        starts_at: '2030-01-02T10:00:00Z',
        ends_at: '2030-01-01T10:00:00Z',
        time_zone: 'Mars/Olympus',
        format: 'online',
        online_url: 'http://insecure.example.com',
      });
      expect(several.status).toBe(422);
      expect(several.body.code).toBe('INVALID_INPUT');
      expect(Object.keys(several.body.errors)).toEqual(['title', 'ends_at', 'time_zone', 'online_url']);
      const notJson = await fetch(`${t.url}/api/events`, {
        method: 'POST',
        headers: { 'private-token': owner.token, 'content-type': 'application/json' },
        body: '{',
      });
      expect(notJson.status).toBe(400);
    });

    it('updates an event and answers conditional GETs with 304 until it changes', async () => {
      const event = await newEvent();
      const first = await call('GET', `/api/events/${event.id}`);
      const etag = first.headers.get('etag')!;
      expect(etag).toMatch(/^W\/".+"$/);
      const cached = await call('GET', `/api/events/${event.id}`, undefined, undefined, { 'if-none-match': etag });
      expect(cached.status).toBe(304);
      expect(cached.text).toBe('');
      expect(cached.headers.get('deprecation')).toBe('@1795305600');

      const updated = await call('PATCH', `/api/events/${event.id}`, owner.token, { title: 'Renamed', capacity: 50 });
      expect(updated.body).toMatchObject({ title: 'Renamed', capacity: 50, spots_left: 50 });
      const fresh = await call('GET', `/api/events/${event.id}`, undefined, undefined, { 'if-none-match': etag });
      expect(fresh.status).toBe(200);
      expect(fresh.headers.get('etag')).not.toBe(etag);
      expect((await call('PATCH', `/api/events/${event.id}`, stranger.token, { title: 'x' })).status).toBe(403);
    });

    it('lists public events in numbered pages with X-Total, X-Next-Page and Link', async () => {
      const slug = uniqueSlug('paged');
      const org = (await call('POST', '/api/organizers', owner.token, { slug, name: 'Paged' })).body;
      const base = t.clock.now().getTime() + 30 * DAY;
      await insertEvents(
        t,
        toGlobal(org.id),
        Array.from({ length: 5 }, (_, i) => ({ title: `Paged ${i}`, startsAt: new Date(base + i * DAY) })),
      );

      const page1 = await call('GET', `/api/events?organizer=${slug}&per_page=2`);
      expect(page1.body.map((e: { title: string }) => e.title)).toEqual(['Paged 0', 'Paged 1']);
      expect(headers(page1, ['x-total', 'x-total-pages', 'x-page', 'x-per-page', 'x-next-page', 'x-prev-page'])).toEqual([
        '5',
        '3',
        '1',
        '2',
        '2',
        '',
      ]);
      const links = page1.headers.get('link')!;
      expect(links).toContain(`<${t.url}/api/events?organizer=${slug}&per_page=2&page=2>; rel="next"`);
      expect(links).toContain(`<${t.url}/api/events?organizer=${slug}&per_page=2&page=3>; rel="last"`);
      const page3 = await call('GET', `/api/events?organizer=${slug}&per_page=2&page=3`);
      expect(page3.body.map((e: { title: string }) => e.title)).toEqual(['Paged 4']);
      expect(headers(page3, ['x-next-page', 'x-prev-page'])).toEqual(['', '2']);
      const beyond = await call('GET', `/api/events?organizer=${slug}&per_page=2&page=9`);
      expect(beyond.body).toEqual([]);
      expect(beyond.headers.get('x-total')).toBe('5');
      const desc = await call('GET', `/api/events?organizer=${slug}&sort=desc&per_page=1`);
      expect(desc.body[0].title).toBe('Paged 4');
      const byOrganizer = await call('GET', `/api/organizers/${slug}/events?per_page=10`);
      expect(byOrganizer.headers.get('x-total')).toBe('5');
      const bad = await call('GET', '/api/events?page=0&sort=sideways');
      expect(bad.status).toBe(400);
      expect(bad.body.errors).toEqual({ page: ['must be at least 1'], sort: ['must be asc or desc'] });
    });
  });

  describe('ticket types', () => {
    it('adds, lists (hidden ones to members only), changes and deletes ticket types', async () => {
      const event = await newEvent();
      const hidden = await call('POST', `/api/events/${event.id}/ticket_types`, owner.token, {
        name: 'Crew',
        price: { amount: 0, currency: 'EUR' },
        hidden: true,
      });
      expect(hidden.status).toBe(201);
      expect((await call('GET', `/api/events/${event.id}/ticket_types`)).body.map((tt: { name: string }) => tt.name)).toEqual(['Standard']);
      expect((await call('GET', `/api/events/${event.id}/ticket_types`, owner.token)).body.map((tt: { name: string }) => tt.name)).toEqual([
        'Standard',
        'Crew',
      ]);

      const badCurrency = await call('POST', `/api/events/${event.id}/ticket_types`, owner.token, {
        name: 'VIP',
        price: { amount: 100, currency: 'EURO' },
      });
      expect(badCurrency.status).toBe(422);
      expect(badCurrency.body.errors).toEqual({ 'price.currency': ['Currency must be an ISO 4217 code such as EUR.'] });
      expect(
        (await call('POST', `/api/events/${event.id}/ticket_types`, stranger.token, { name: 'x', price: { amount: 0, currency: 'EUR' } }))
          .status,
      ).toBe(403);

      const changed = await call('PATCH', `/api/ticket_types/${hidden.body.id}`, owner.token, {
        quantity: 5,
        price: { amount: 1000, currency: 'EUR' },
      });
      expect(changed.body).toMatchObject({ quantity: 5, remaining: 5, price: { amount: 1000, currency: 'EUR' } });
      expect((await call('PATCH', `/api/ticket_types/${hidden.body.id}`, stranger.token, { name: 'x' })).status).toBe(404);
      expect((await call('PATCH', '/api/ticket_types/not-a-uuid', owner.token, { name: 'x' })).status).toBe(404);
      expect((await call('DELETE', `/api/ticket_types/${hidden.body.id}`, owner.token)).status).toBe(204);

      expect((await register(stranger.token, event)).status).toBe(201);
      const inUse = await call('DELETE', `/api/ticket_types/${event.ticketTypeId}`, owner.token);
      expect(inUse.status).toBe(409);
      expect(inUse.body.code).toBe('TICKET_TYPE_IN_USE');
    });
  });

  describe('registrations', () => {
    it('registers, lists mine with pagination, shows, cancels; organizers list attendees and check them in', async () => {
      const event = await newEvent();
      const guest = await createUserWithToken(t);
      const created = await register(guest.token, event, 2);
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        status: 'confirmed',
        quantity: 2,
        reference_code: expect.stringMatching(/^AG-/),
        user: { username: guest.user.username },
        attendees: [
          { name: 'Guest 1', email: 'guest1@example.com', checked_in_at: null },
          { name: 'Guest 2', email: 'guest2@example.com', checked_in_at: null },
        ],
      });
      const again = await register(guest.token, event);
      expect(again.status).toBe(409);
      expect(again.body.code).toBe('ALREADY_REGISTERED');
      const malformed = await call('POST', `/api/events/${event.id}/registrations`, guest.token, { ticket_type_id: 'x', attendees: [] });
      expect(malformed.status).toBe(400);
      expect(malformed.body.errors).toEqual({
        ticket_type_id: ['must be a ticket type id'],
        attendees: ['must name at least one attendee'],
      });
      expect((await register(guest.token, { id: '00000000-0000-4000-8000-000000000000', ticketTypeId: event.ticketTypeId })).status).toBe(
        404,
      );

      const mine = await call('GET', '/api/registrations?per_page=1', guest.token);
      expect(mine.body.map((r: { id: string }) => r.id)).toEqual([created.body.id]);
      expect(mine.headers.get('x-total')).toBe('1');
      expect((await call('GET', '/api/registrations')).status).toBe(401);
      expect((await call('GET', `/api/registrations/${created.body.id}`, guest.token)).body.id).toBe(created.body.id);
      expect((await call('GET', `/api/registrations/${created.body.id}`, stranger.token)).status).toBe(404);
      expect((await call('GET', `/api/registrations/${created.body.id}`)).status).toBe(404);

      const list = await call('GET', `/api/events/${event.id}/registrations?status=confirmed`, owner.token);
      expect(list.body.map((r: { id: string }) => r.id)).toEqual([created.body.id]);
      expect((await call('GET', `/api/events/${event.id}/registrations`, stranger.token)).status).toBe(403);
      const attendeeId = created.body.attendees[0].id;
      expect((await call('POST', `/api/attendees/${attendeeId}/check_in`, stranger.token)).status).toBe(404);
      const checkedIn = await call('POST', `/api/attendees/${attendeeId}/check_in`, owner.token);
      expect(checkedIn.status).toBe(200);
      expect(checkedIn.body.checked_in_at).toEqual(expect.any(String));
      expect(checkedIn.body.already_checked_in).toBe(false);
      const secondScan = await call('POST', `/api/attendees/${attendeeId}/check_in`, owner.token);
      expect(secondScan.status).toBe(200);
      expect(secondScan.body).toMatchObject({ id: attendeeId, checked_in_at: checkedIn.body.checked_in_at, already_checked_in: true });

      // Checked in: the guest may no longer cancel; the organizer still may.
      const refused = await call('POST', `/api/registrations/${created.body.id}/cancel`, guest.token);
      expect(refused.status).toBe(409);
      expect(refused.body).toMatchObject({ code: 'CHECKED_IN', errors: { registration_id: [expect.any(String)] } });
      const cancelled = await call('POST', `/api/registrations/${created.body.id}/cancel`, owner.token);
      expect(cancelled.body).toMatchObject({ status: 'cancelled', cancelled_at: expect.any(String), cancelled_by: 'organizer' });
      expect((await call('POST', `/api/registrations/${created.body.id}/cancel`, guest.token)).status).toBe(409);
    });
  });

  describe('one set of rules behind REST and GraphQL', () => {
    it('fills capacity and the waitlist through REST, and GraphQL reads the same state', async () => {
      const event = await newEvent({ capacity: 2 });
      const people = await Promise.all([1, 2, 3].map(() => createUserWithToken(t)));
      const statuses = [];
      for (const person of people) statuses.push((await register(person.token, event)).body.status);
      expect(statuses).toEqual(['confirmed', 'confirmed', 'waitlisted']);

      const view = await graphql(
        t.url,
        `
          query ($id: ID!) {
            event(id: $id) {
              spotsLeft
              waitlisted: registrations(status: WAITLISTED) {
                nodes {
                  id
                }
              }
            }
          }
        `,
        {
          privateToken: owner.token,
          variables: { id: toGlobal(event.id, 'Event') },
        },
      );
      expect(view.body.data?.event.spotsLeft).toBe(0);
      expect((await call('GET', `/api/events/${event.id}`)).body.spots_left).toBe(0);

      // Cancelling through GraphQL promotes the REST-made waitlisted registration.
      const firstReg = (await call('GET', '/api/registrations', people[0]!.token)).body[0];
      const cancel = await graphql(
        t.url,
        `
          mutation ($id: ID!) {
            cancelRegistration(input: { registrationId: $id }) {
              registration {
                status
              }
            }
          }
        `,
        {
          privateToken: people[0]!.token,
          variables: { id: toGlobal(firstReg.id, 'Registration') },
        },
      );
      expect(cancel.body.data?.cancelRegistration.registration.status).toBe('CANCELLED');
      expect((await call('GET', '/api/registrations', people[2]!.token)).body[0].status).toBe('confirmed');
    });

    it('refuses the same invalid input with the same code in both APIs', async () => {
      const event = await newEvent();
      const restAnswer = await register(stranger.token, event, 11);
      const gql = await graphql(
        t.url,
        `
          mutation ($input: RegisterForEventInput!) {
            registerForEvent(input: $input) {
              userErrors {
                field
                code
                message
              }
            }
          }
        `,
        {
          privateToken: stranger.token,
          variables: {
            input: {
              eventId: toGlobal(event.id, 'Event'),
              ticketTypeId: toGlobal(event.ticketTypeId, 'TicketType'),
              attendees: Array.from({ length: 11 }, () => ({ name: 'x', email: 'x@example.com' })),
            },
          },
        },
      );
      expect(restAnswer.status).toBe(422);
      expect(restAnswer.body.code).toBe('INVALID_ATTENDEES');
      expect(gql.body.data?.registerForEvent.userErrors).toEqual([
        { field: ['input', 'attendees'], code: 'INVALID_ATTENDEES', message: restAnswer.body.message },
      ]);
    });

    it('hides the same things from anonymous callers in both APIs', async () => {
      const priv = await newEvent({ visibility: 'private' });
      expect((await call('GET', `/api/events/${priv.id}`)).status).toBe(404);
      const gql = await graphql(
        t.url,
        `
          query ($id: ID!) {
            event(id: $id) {
              id
            }
          }
        `,
        { variables: { id: toGlobal(priv.id, 'Event') } },
      );
      expect(gql.body.data?.event).toBeNull();
      const online = await newEvent({ format: 'online', venue: null, online_url: 'https://meet.example.com/secret' });
      expect((await call('GET', `/api/events/${online.id}`)).body.online_url).toBeNull();
      expect((await call('GET', `/api/events/${online.id}`, owner.token)).body.online_url).toBe('https://meet.example.com/secret');
    });
    it('holds one active registration per person whichever API registers', async () => {
      const event = await newEvent();
      const person = await createUserWithToken(t);
      expect((await register(person.token, event)).status).toBe(201);
      const gql = await graphql(
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
          privateToken: person.token,
          variables: {
            input: {
              eventId: toGlobal(event.id, 'Event'),
              ticketTypeId: toGlobal(event.ticketTypeId, 'TicketType'),
              attendees: [{ name: 'Again', email: 'again@example.com' }],
            },
          },
        },
      );
      expect(gql.body.data?.registerForEvent).toEqual({ registration: null, userErrors: [{ code: 'ALREADY_REGISTERED' }] });
    });

    it('refuses the same role-restricted action in both APIs, and shows the same check-in', async () => {
      const event = await newEvent();
      const rest403 = await call('PATCH', `/api/events/${event.id}`, stranger.token, { title: 'Hijack' });
      const gql = await graphql(
        t.url,
        `
          mutation ($id: ID!) {
            updateEvent(input: { eventId: $id, title: "Hijack" }) {
              event {
                id
              }
            }
          }
        `,
        {
          privateToken: stranger.token,
          variables: { id: toGlobal(event.id, 'Event') },
        },
      );
      expect(rest403.status).toBe(403);
      expect(gql.body.errors?.[0]).toMatchObject({
        message: rest403.body.message,
        extensions: { code: 'FORBIDDEN', reason: rest403.body.code },
      });

      const person = await createUserWithToken(t);
      const registration = (await register(person.token, event)).body;
      const checkIn = await graphql(
        t.url,
        `
          mutation ($id: ID!) {
            checkInAttendee(input: { attendeeId: $id }) {
              attendee {
                checkedInAt
              }
            }
          }
        `,
        {
          privateToken: owner.token,
          variables: { id: Buffer.from(`Attendee:${registration.attendees[0].id}`).toString('base64url') },
        },
      );
      const checkedInAt = checkIn.body.data?.checkInAttendee.attendee.checkedInAt;
      expect(checkedInAt).toEqual(expect.any(String));
      expect((await call('GET', `/api/registrations/${registration.id}`, person.token)).body.attendees[0].checked_in_at).toBe(checkedInAt);
    });

    it('keeps a sales window closed in both APIs', async () => {
      const event = await newEvent();
      const opens = new Date(t.clock.now().getTime() + DAY).toISOString();
      const later = (
        await call('POST', `/api/events/${event.id}/ticket_types`, owner.token, {
          name: 'Later',
          price: { amount: 0, currency: 'EUR' },
          sales_start_at: opens,
        })
      ).body;
      const person = await createUserWithToken(t);
      const restAnswer = await register(person.token, { id: event.id, ticketTypeId: later.id });
      expect(restAnswer.status).toBe(409);
      const gql = await graphql(
        t.url,
        `
          query ($id: ID!) {
            node(id: $id) {
              ... on TicketType {
                onSale
                salesStartAt
              }
            }
          }
        `,
        {
          variables: { id: toGlobal(later.id, 'TicketType') },
        },
      );
      expect(gql.body.data?.node).toEqual({ onSale: false, salesStartAt: later.sales_start_at });
      expect(restAnswer.body.code).toBe('SALES_NOT_STARTED');
    });
  });

  describe('usage per token', () => {
    it('counts calls per token so operators see who still uses the API', async () => {
      const caller = await createUserWithToken(t, ['read_api']);
      for (let i = 0; i < 3; i++) await call('GET', '/api/user', caller.token);
      await t.get(LegacyApiUsageService).flush();
      const report = await runCli({ ...t.databaseEnv, SECRET_KEY: TEST_SECRET_KEY }, 'legacy:usage', '--days', '7');
      expect(report.stderr).toBe('');
      expect(report.json.usage).toContainEqual({
        subject: `personal_access_token:${caller.tokenId}`,
        credential: 'test',
        username: caller.user.username,
        calls: 3,
        lastCalledAt: expect.any(String),
      });
    });
  });
});

function headers(res: { headers: Headers }, names: string[]): (string | null)[] {
  return names.map((n) => res.headers.get(n));
}

/** The GraphQL ID of a REST uuid (what a migrating client would look up again). */
function toGlobal(uuid: string, type: 'Organizer' | 'Event' | 'Registration' | 'TicketType' = 'Organizer'): string {
  const id = Buffer.from(`${type}:${uuid}`).toString('base64url');
  expect(idOfType(id, type)).toBe(uuid);
  return id;
}
