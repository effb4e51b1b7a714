import { createUserWithToken } from './support/fixtures.js';
import { createEvent, createOrganizer, mutate, mutateRaw, registerFor, registrationOf, uniqueSlug } from './support/events.js';
import { graphql } from './support/http.js';
import { startTestApp, TestApp } from './support/test-app.js';

const EVENT_FIELDS = 'id slug title status visibility phase onlineUrl spotsLeft capacity venue { name city country } organizer { slug }';

describe('Events domain over GraphQL: who sees and does what', () => {
  let t: TestApp;
  let owner: { token: string; username: string };
  let stranger: { token: string; username: string };
  let organizer: { id: string; slug: string };

  beforeAll(async () => {
    t = await startTestApp();
    const o = await createUserWithToken(t);
    owner = { token: o.token, username: o.user.username };
    const s = await createUserWithToken(t);
    stranger = { token: s.token, username: s.user.username };
    organizer = await createOrganizer(t, owner.token, { name: 'Paris Rust Meetup', websiteUrl: 'https://rust.paris' });
  });
  afterAll(() => t.close());

  it('makes the creator of an organizer its owner, and refuses a slug already taken', async () => {
    const res = await graphql(
      t.url,
      `
        query ($slug: String!) {
          organizer(slug: $slug) {
            name
            websiteUrl
            viewerRole
          }
        }
      `,
      {
        privateToken: owner.token,
        variables: { slug: organizer.slug },
      },
    );
    expect(res.body.data?.organizer).toEqual({ name: 'Paris Rust Meetup', websiteUrl: 'https://rust.paris', viewerRole: 'OWNER' });

    const taken = await mutateRaw(t, stranger.token, 'createOrganizer', { slug: organizer.slug, name: 'Copycat' }, 'organizer { id }');
    expect(taken.body.data?.createOrganizer).toEqual({
      organizer: null,
      userErrors: [{ field: ['input', 'slug'], message: 'This slug is already taken.', code: 'SLUG_TAKEN' }],
    });
  });

  it('keeps a draft to the organizer, then publishes it for everyone once it has a ticket type', async () => {
    const { event } = await mutate(
      t,
      owner.token,
      'createEvent',
      {
        organizerId: organizer.id,
        title: 'Rust & Coffee — Été',
        startsAt: '2030-06-01T08:00:00+02:00',
        endsAt: '2030-06-01T10:00:00+02:00',
        timeZone: 'Europe/Paris',
        format: 'IN_PERSON',
        venue: { name: 'Le Bar', city: 'Paris', country: 'fr' },
      },
      `event { ${EVENT_FIELDS} startsAt timeZone format }`,
    );
    expect(event).toMatchObject({
      title: 'Rust & Coffee — Été',
      status: 'DRAFT',
      visibility: 'PUBLIC',
      phase: 'UPCOMING',
      startsAt: '2030-06-01T06:00:00.000Z',
      timeZone: 'Europe/Paris',
      format: 'IN_PERSON',
      venue: { name: 'Le Bar', city: 'Paris', country: 'FR' },
      organizer: { slug: organizer.slug },
    });
    expect(event.slug).toMatch(/^rust-coffee-ete-[0-9a-f]{8}$/);

    const lookup = `query($id: ID!) { event(id: $id) { title status } node(id: $id) { id ... on Event { title } } }`;
    expect((await graphql(t.url, lookup, { variables: { id: event.id } })).body.data).toEqual({ event: null, node: null });
    expect((await graphql(t.url, lookup, { privateToken: stranger.token, variables: { id: event.id } })).body.data).toEqual({
      event: null,
      node: null,
    });
    expect((await graphql(t.url, lookup, { privateToken: owner.token, variables: { id: event.id } })).body.data).toEqual({
      event: { title: 'Rust & Coffee — Été', status: 'DRAFT' },
      node: { id: event.id, title: 'Rust & Coffee — Été' },
    });

    const incomplete = await mutateRaw(t, owner.token, 'publishEvent', { eventId: event.id }, 'event { id }');
    expect(incomplete.body.data?.publishEvent.userErrors).toEqual([
      { field: ['input', 'ticketTypes'], message: 'Add at least one ticket type before publishing.', code: 'EVENT_INCOMPLETE' },
    ]);
    await mutate(
      t,
      owner.token,
      'createTicketType',
      { eventId: event.id, name: 'Free', price: { amount: 0, currency: 'eur' } },
      'ticketType { id }',
    );
    const published = await mutate(t, owner.token, 'publishEvent', { eventId: event.id }, 'event { status publishedAt }');
    expect(published.event.status).toBe('PUBLISHED');

    const anonymous = await graphql(
      t.url,
      `
        query ($slug: String!) {
          event(slug: $slug) {
            title
            status
            ticketTypes {
              name
              price {
                amount
                currency
              }
            }
          }
        }
      `,
      {
        variables: { slug: event.slug },
      },
    );
    expect(anonymous.status).toBe(200);
    expect(anonymous.body.data?.event).toEqual({
      title: 'Rust & Coffee — Été',
      status: 'PUBLISHED',
      ticketTypes: [{ name: 'Free', price: { amount: 0, currency: 'EUR' } }],
    });
  });

  it('lists published public events only; unlisted ones are reachable by slug, private ones by members only', async () => {
    const pub = await createEvent(t, owner.token, organizer.id, { title: 'Listed talk' });
    const unlisted = await createEvent(t, owner.token, organizer.id, { title: 'Unlisted talk', visibility: 'UNLISTED' });
    const priv = await createEvent(t, owner.token, organizer.id, { title: 'Private talk', visibility: 'PRIVATE' });
    const draft = await createEvent(t, owner.token, organizer.id, { title: 'Draft talk', publish: false });

    const listing = await graphql(
      t.url,
      `
        query ($o: String) {
          events(first: 100, filter: { organizerSlug: $o }) {
            nodes {
              id
            }
            totalCount
          }
        }
      `,
      {
        variables: { o: organizer.slug },
      },
    );
    const listed = listing.body.data?.events.nodes.map((n: { id: string }) => n.id);
    expect(listed).toContain(pub.id);
    for (const hidden of [unlisted, priv, draft]) expect(listed).not.toContain(hidden.id);
    expect(listing.body.data?.events.totalCount).toBe(listed.length);

    const bySlug = `query($slug: String!) { event(slug: $slug) { title } }`;
    expect((await graphql(t.url, bySlug, { variables: { slug: unlisted.slug } })).body.data?.event).toEqual({ title: 'Unlisted talk' });
    expect((await graphql(t.url, bySlug, { variables: { slug: priv.slug } })).body.data?.event).toBeNull();
    expect((await graphql(t.url, bySlug, { privateToken: stranger.token, variables: { slug: priv.slug } })).body.data?.event).toBeNull();
    expect((await graphql(t.url, bySlug, { privateToken: owner.token, variables: { slug: priv.slug } })).body.data?.event).toEqual({
      title: 'Private talk',
    });

    // The organizer's own page lists everything to its members, the listed events to others.
    const page = `query($slug: String!) { organizer(slug: $slug) { events(first: 100) { nodes { id } } } }`;
    const forOwner = (await graphql(t.url, page, { privateToken: owner.token, variables: { slug: organizer.slug } })).body.data?.organizer
      .events.nodes;
    const forPublic = (await graphql(t.url, page, { variables: { slug: organizer.slug } })).body.data?.organizer.events.nodes;
    expect(forOwner.map((n: { id: string }) => n.id)).toEqual(expect.arrayContaining([pub.id, unlisted.id, priv.id, draft.id]));
    expect(forPublic.map((n: { id: string }) => n.id)).toContain(pub.id);
    expect(forPublic.map((n: { id: string }) => n.id)).not.toContain(draft.id);
  });

  it('never shows anonymous callers registrations, attendees, emails, online URLs or hidden ticket types', async () => {
    const event = await createEvent(t, owner.token, organizer.id, { hiddenTicket: false });
    await mutate(
      t,
      owner.token,
      'createTicketType',
      { eventId: event.id, name: 'Speaker', price: { amount: 0, currency: 'EUR' }, hidden: true },
      'ticketType { id }',
    );
    const { token } = await createUserWithToken(t);
    const registration = registrationOf(await registerFor(t, token, event));

    const query = `query($id: ID!) { event(id: $id) { onlineUrl ticketTypes { name } viewerRegistration { id } registrations { nodes { id } } } }`;
    const anonymous = await graphql(t.url, query, { variables: { id: event.id } });
    expect(anonymous.status).toBe(200);
    expect(anonymous.body.data?.event).toEqual({
      onlineUrl: null,
      ticketTypes: [{ name: 'General admission' }],
      viewerRegistration: null,
      registrations: null,
    });
    expect(anonymous.body.errors).toEqual([
      expect.objectContaining({ path: ['event', 'registrations'], extensions: expect.objectContaining({ code: 'FORBIDDEN' }) }),
    ]);

    const nodes = await graphql(
      t.url,
      `
        query ($r: ID!, $a: ID!) {
          r: node(id: $r) {
            id
          }
          a: node(id: $a) {
            id
          }
        }
      `,
      {
        variables: { r: registration.id, a: registration.attendees[0].id },
      },
    );
    expect(nodes.body.data).toEqual({ r: null, a: null });
    // Another signed-in user sees no more.
    const other = await graphql(
      t.url,
      `
        query ($r: ID!) {
          node(id: $r) {
            id
          }
        }
      `,
      { privateToken: stranger.token, variables: { r: registration.id } },
    );
    expect(other.body.data).toEqual({ node: null });
    const strangerView = await graphql(t.url, query, { privateToken: stranger.token, variables: { id: event.id } });
    expect(strangerView.body.data?.event.onlineUrl).toBeNull();
    expect(strangerView.body.errors?.[0].extensions?.code).toBe('FORBIDDEN');
  });

  it('shows attendees their own registration and the online URL, and organizers every registration with emails', async () => {
    const event = await createEvent(t, owner.token, organizer.id);
    const { token, user } = await createUserWithToken(t);
    const registration = registrationOf(await registerFor(t, token, event, 2));
    expect(registration).toMatchObject({ status: 'CONFIRMED', quantity: 2 });
    expect(registration.referenceCode).toMatch(/^AG-[A-HJ-NP-Z2-9]{8}$/);

    const mine = await graphql(
      t.url,
      `
        query ($id: ID!) {
          event(id: $id) {
            onlineUrl
            spotsLeft
            viewerRegistration {
              id
              status
            }
          }
          viewer {
            registrations(first: 5) {
              nodes {
                id
                event {
                  id
                }
                attendees {
                  name
                  email
                }
              }
            }
          }
        }
      `,
      { privateToken: token, variables: { id: event.id } },
    );
    expect(mine.body.errors).toBeUndefined();
    expect(mine.body.data?.event).toEqual({
      onlineUrl: 'https://meet.example.com/room-42',
      spotsLeft: 98,
      viewerRegistration: { id: registration.id, status: 'CONFIRMED' },
    });
    expect(mine.body.data?.viewer.registrations.nodes).toEqual([
      {
        id: registration.id,
        event: { id: event.id },
        attendees: [
          { name: 'Attendee 1', email: 'attendee1@example.com' },
          { name: 'Attendee 2', email: 'attendee2@example.com' },
        ],
      },
    ]);

    const organizerView = await graphql(
      t.url,
      `
        query ($id: ID!) {
          event(id: $id) {
            registrations {
              nodes {
                id
                user {
                  username
                }
                attendees {
                  email
                }
              }
            }
          }
        }
      `,
      {
        privateToken: owner.token,
        variables: { id: event.id },
      },
    );
    expect(organizerView.body.data?.event.registrations.nodes).toEqual([
      {
        id: registration.id,
        user: { username: user.username },
        attendees: [{ email: 'attendee1@example.com' }, { email: 'attendee2@example.com' }],
      },
    ]);

    // Another user's lists are not readable through `user`.
    const foreign = await graphql(
      t.url,
      `
        query ($u: String!) {
          user(username: $u) {
            registrations {
              nodes {
                id
              }
            }
          }
        }
      `,
      {
        privateToken: stranger.token,
        variables: { u: user.username },
      },
    );
    expect(foreign.body.data?.user.registrations).toBeNull();
    expect(foreign.body.errors?.[0].extensions?.code).toBe('FORBIDDEN');
  });

  it('refuses mutations to read_api tokens and to anonymous callers with the contract errors', async () => {
    const { token } = await createUserWithToken(t, ['read_api']);
    const readOnly = await mutateRaw(t, token, 'createOrganizer', { slug: uniqueSlug('ro'), name: 'Nope' }, 'organizer { id }');
    expect(readOnly.status).toBe(403);
    expect(readOnly.body).toEqual({ message: '403 Forbidden', error: 'insufficient_scope' });
    const anonymous = await mutateRaw(t, undefined, 'createOrganizer', { slug: uniqueSlug('anon'), name: 'Nope' }, 'organizer { id }');
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ message: '401 Unauthorized' });
    // read_api still reads.
    const reads = await graphql(t.url, '{ events(first: 1) { nodes { id } } }', { privateToken: token });
    expect(reads.status).toBe(200);
  });

  it('lets only owners and admins change events; check-in staff check attendees in; others get FORBIDDEN', async () => {
    const event = await createEvent(t, owner.token, organizer.id);
    const staff = await createUserWithToken(t);
    const admin = await createUserWithToken(t);
    await mutate(
      t,
      owner.token,
      'addOrganizerMember',
      { organizerId: organizer.id, username: staff.user.username, role: 'CHECK_IN_STAFF' },
      'member { role }',
    );
    await mutate(
      t,
      owner.token,
      'addOrganizerMember',
      { organizerId: organizer.id, username: admin.user.username, role: 'ADMIN' },
      'member { role user { username } }',
    );

    for (const token of [stranger.token, staff.token]) {
      const res = await mutateRaw(t, token, 'updateEvent', { eventId: event.id, title: 'Hijacked' }, 'event { title }');
      expect(res.status).toBe(200);
      expect(res.body.data).toBeNull();
      expect(res.body.errors?.[0]).toMatchObject({
        message: 'You do not have the role needed to change this event.',
        extensions: { code: 'FORBIDDEN', reason: 'FORBIDDEN' },
      });
    }
    const updated = await mutate(t, admin.token, 'updateEvent', { eventId: event.id, title: 'Renamed by admin' }, 'event { title }');
    expect(updated.event.title).toBe('Renamed by admin');

    // An admin cannot make owners; an owner can. The last owner cannot leave.
    const promote = await mutateRaw(
      t,
      admin.token,
      'updateOrganizerMember',
      { organizerId: organizer.id, username: staff.user.username, role: 'OWNER' },
      'member { role }',
    );
    expect(promote.body.errors?.[0].extensions?.code).toBe('FORBIDDEN');
    const leave = await mutateRaw(
      t,
      owner.token,
      'removeOrganizerMember',
      { organizerId: organizer.id, username: owner.username },
      'organizer { id }',
    );
    expect(leave.body.data?.removeOrganizerMember.userErrors[0]).toMatchObject({ code: 'LAST_OWNER' });

    const attendee = await createUserWithToken(t);
    const registration = registrationOf(await registerFor(t, attendee.token, event));
    const attendeeId = registration.attendees[0].id;
    const byStranger = await mutateRaw(t, stranger.token, 'checkInAttendee', { attendeeId }, 'attendee { checkedInAt }');
    expect(byStranger.body.errors?.[0].extensions?.code).toBe('NOT_FOUND');
    const byAttendee = await mutateRaw(t, attendee.token, 'checkInAttendee', { attendeeId }, 'attendee { checkedInAt }');
    expect(byAttendee.body.errors?.[0].extensions?.code).toBe('FORBIDDEN');
    const checkedIn = await mutate(t, staff.token, 'checkInAttendee', { attendeeId }, 'attendee { checkedInAt }');
    expect(new Date(checkedIn.attendee.checkedInAt).getTime()).toBeGreaterThan(0);
    // A second scan is no error: it says so, with the first check-in's time.
    const twice = await mutate(t, staff.token, 'checkInAttendee', { attendeeId }, 'attendee { checkedInAt } alreadyCheckedIn');
    expect(twice).toMatchObject({ attendee: { checkedInAt: checkedIn.attendee.checkedInAt }, alreadyCheckedIn: true });

    const members = await graphql(
      t.url,
      `
        query ($s: String!) {
          organizer(slug: $s) {
            members {
              nodes {
                role
                user {
                  username
                }
              }
            }
          }
        }
      `,
      {
        privateToken: staff.token,
        variables: { s: organizer.slug },
      },
    );
    expect(members.body.data?.organizer.members.nodes.map((m: { role: string }) => m.role)).toEqual(['OWNER', 'CHECK_IN_STAFF', 'ADMIN']);
  });

  it('answers invalid input with userErrors naming the field, and unknown ids with NOT_FOUND', async () => {
    const base = {
      organizerId: organizer.id,
      title: 'x',
      startsAt: '2030-01-01T10:00:00Z',
      endsAt: '2030-01-01T12:00:00Z',
      timeZone: 'Europe/Paris',
      format: 'ONLINE',
    };
    const cases: [Record<string, unknown>, string[], string][] = [
      [{ endsAt: '2030-01-01T09:00:00Z' }, ['input', 'endsAt'], 'INVALID_TIME_RANGE'],
      [{ timeZone: 'Mars/Olympus' }, ['input', 'timeZone'], 'INVALID_TIME_ZONE'],
      [{ title: '   ' }, ['input', 'title'], 'INVALID_TITLE'],
      [{ slug: 'Not A Slug' }, ['input', 'slug'], 'INVALID_SLUG'],
      [{ onlineUrl: 'javascript:alert(1)' }, ['input', 'onlineUrl'], 'INVALID_URL'],
      [{ venue: { name: 'Hall', country: 'France' } }, ['input', 'venue', 'country'], 'INVALID_COUNTRY'],
      [{ capacity: 0 }, ['input', 'capacity'], 'INVALID_CAPACITY'],
    ];
    for (const [change, field, code] of cases) {
      const res = await mutateRaw(t, owner.token, 'createEvent', { ...base, ...change }, 'event { id }');
      expect(res.body.data?.createEvent).toEqual({ event: null, userErrors: [expect.objectContaining({ field, code })] });
    }
    // Every invalid field at once, in the order of the input, so a form can show them all.
    const several = await mutateRaw(
      t,
      owner.token,
      'createEvent',
      {
        ...base,
        title: '',
        endsAt: '2030-01-01T09:00:00Z',
        timeZone: 'Mars/Olympus',
        venue: { name: 'Hall', country: 'France' },
        capacity: -5,
      },
      'event { id }',
    );
    expect(several.body.data?.createEvent.event).toBeNull();
    expect(several.body.data?.createEvent.userErrors.map((e: { field: string[]; code: string }) => [e.field.join('.'), e.code])).toEqual([
      ['input.title', 'INVALID_TITLE'],
      ['input.endsAt', 'INVALID_TIME_RANGE'],
      ['input.timeZone', 'INVALID_TIME_ZONE'],
      ['input.venue.country', 'INVALID_COUNTRY'],
      ['input.capacity', 'INVALID_CAPACITY'],
    ]);

    const badDate = await mutateRaw(t, owner.token, 'createEvent', { ...base, startsAt: 'tomorrow' }, 'event { id }');
    expect(badDate.body.errors?.[0].message).toContain('DateTime must be an ISO 8601 date and time with an offset');
    expect(badDate.body.errors?.[0].extensions?.code).toBe('BAD_USER_INPUT');

    const unknown = await mutateRaw(t, owner.token, 'publishEvent', { eventId: 'not-an-id' }, 'event { id }');
    expect(unknown.body.errors?.[0]).toMatchObject({ extensions: { code: 'NOT_FOUND', reason: 'EVENT_NOT_FOUND' } });
    // An organizer's id is not an event's.
    const wrongType = await mutateRaw(t, owner.token, 'publishEvent', { eventId: organizer.id }, 'event { id }');
    expect(wrongType.body.errors?.[0].extensions?.code).toBe('NOT_FOUND');
  });

  it('cancels an event: still visible, marked cancelled, closed to registration; deletes drafts only', async () => {
    const event = await createEvent(t, owner.token, organizer.id);
    const cancelled = await mutate(t, owner.token, 'cancelEvent', { eventId: event.id }, 'event { status }');
    expect(cancelled.event.status).toBe('CANCELLED');
    const { token } = await createUserWithToken(t);
    const refused = await registerFor(t, token, event);
    expect(refused.body.data?.registerForEvent.userErrors[0]).toMatchObject({ code: 'EVENT_CANCELLED' });
    const notDraft = await mutateRaw(t, owner.token, 'deleteEvent', { eventId: event.id }, 'deletedEventId');
    expect(notDraft.body.data?.deleteEvent.userErrors[0]).toMatchObject({ code: 'EVENT_NOT_DRAFT' });

    const draft = await createEvent(t, owner.token, organizer.id, { publish: false });
    const deleted = await mutate(t, owner.token, 'deleteEvent', { eventId: draft.id }, 'deletedEventId');
    expect(deleted.deletedEventId).toBe(draft.id);
    const gone = await graphql(
      t.url,
      `
        query ($id: ID!) {
          event(id: $id) {
            id
          }
        }
      `,
      { privateToken: owner.token, variables: { id: draft.id } },
    );
    expect(gone.body.data?.event).toBeNull();
  });

  it('derives the phase from the clock', async () => {
    const event = await createEvent(t, owner.token, organizer.id, { startsInMs: 60_000 });
    const phase = async () =>
      (
        await graphql(
          t.url,
          `
            query ($id: ID!) {
              event(id: $id) {
                phase
              }
            }
          `,
          { variables: { id: event.id } },
        )
      ).body.data?.event.phase;
    expect(await phase()).toBe('UPCOMING');
    t.clock.advance(120_000);
    expect(await phase()).toBe('ONGOING');
    t.clock.advance(3 * 3600_000);
    expect(await phase()).toBe('ENDED');
    const { token } = await createUserWithToken(t);
    const late = await registerFor(t, token, event);
    expect(late.body.data?.registerForEvent.userErrors[0]).toMatchObject({ code: 'EVENT_ENDED' });
  });
});
