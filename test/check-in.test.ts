import jwt from 'jsonwebtoken';
import { createPublicKey } from 'node:crypto';
import { idOfType } from '../src/graphql/global-id.js';
import { IdTokenService } from '../src/oauth/keys/id-token.service.js';
import { SigningKeysService } from '../src/oauth/keys/signing-keys.service.js';
import { createUserWithToken } from './support/fixtures.js';
import { createEvent, createOrganizer, mutate, mutateRaw, registerFor, registrationOf } from './support/events.js';
import { get, graphql, rest } from './support/http.js';
import { startTestApp, TestApp } from './support/test-app.js';

const SCAN = 'attendee { id name checkedInAt } alreadyCheckedIn';

/** Check-in at the door: ticket codes a check-in app verifies offline, and checkInAttendee by code. */
describe('Check-in by ticket code', () => {
  let t: TestApp;
  let owner: string;
  let staff: string;
  let organizerId: string;

  beforeAll(async () => {
    t = await startTestApp();
    owner = (await createUserWithToken(t)).token;
    organizerId = (await createOrganizer(t, owner)).id;
    const s = await createUserWithToken(t);
    staff = s.token;
    await mutate(t, owner, 'addOrganizerMember', { organizerId, username: s.user.username, role: 'CHECK_IN_STAFF' }, 'member { role }');
  });
  afterAll(() => t.close());

  /** A confirmed registration of one attendee, and the code its registrant sees. */
  const ticket = async (event: { id: string; ticketTypeId: string }) => {
    const guest = await createUserWithToken(t);
    const registration = registrationOf(await registerFor(t, guest.token, event));
    return { guest, registration, attendeeId: registration.attendees[0].id as string, code: await codeOf(guest.token, registration.id) };
  };

  const codeOf = async (token: string, registrationId: string): Promise<string | null> => {
    const res = await graphql(
      t.url,
      `
        query ($id: ID!) {
          node(id: $id) {
            ... on Registration {
              attendees {
                ticketCode
              }
            }
          }
        }
      `,
      { privateToken: token, variables: { id: registrationId } },
    );
    return res.body.data?.node.attendees[0].ticketCode;
  };

  const scan = (token: string, input: Record<string, unknown>) => mutateRaw(t, token, 'checkInAttendee', input, SCAN);

  it('gives the registrant a code that verifies offline with the published JWKS: typed, for check-in, ids only', async () => {
    const event = await createEvent(t, owner, organizerId);
    const { guest, registration, attendeeId, code } = await ticket(event);
    expect(code).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(code!.length).toBeLessThan(800);
    // The same code each time: what a mail showed and what the app shows agree.
    expect(await codeOf(guest.token, registration.id)).toBe(code);

    const discovery = await get<{ jwks_uri: string; issuer: string }>(t.url, '/.well-known/openid-configuration');
    const jwks = await fetch(discovery.body.jwks_uri).then((r) => r.json() as Promise<{ keys: { kid: string }[] }>);
    const { header, payload } = jwt.decode(code!, { complete: true })!;
    expect(header).toEqual({ alg: 'RS256', typ: 'agora-ticket+jwt', kid: expect.any(String) });
    const jwk = jwks.keys.find((k) => k.kid === header.kid);
    expect(jwk).toBeDefined();
    const claims = jwt.verify(code!, createPublicKey({ key: jwk as never, format: 'jwk' }), {
      algorithms: ['RS256'],
      issuer: discovery.body.issuer,
      audience: 'agora-check-in',
    });
    expect(claims).toEqual(payload);
    expect(payload).toEqual({
      a: idOfType(attendeeId, 'Attendee'),
      r: idOfType(registration.id, 'Registration'),
      e: idOfType(event.id, 'Event'),
      iss: discovery.body.issuer,
      aud: 'agora-check-in',
    });
    // It is no id_token: the logout endpoint's reader of id_token_hints refuses it.
    expect(await t.get(IdTokenService).readHint(code!)).toBeNull();
  });

  it('keeps publishing a retired key for ticket codes long after the OpenID Connect JWKS dropped it', async () => {
    const event = await createEvent(t, owner, organizerId);
    const { code } = await ticket(event);
    const kid = (jwt.decode(code!, { complete: true }) as jwt.Jwt).header.kid!;
    const kids = async (path: string) => ((await get<{ keys: { kid: string }[] }>(t.url, path)).body.keys ?? []).map((k) => k.kid);
    const first = await get(t.url, '/check-in/keys');
    expect([first.status, first.body]).toEqual([200, expect.anything()]);
    expect(await kids('/check-in/keys')).toContain(kid);

    await t.get(SigningKeysService).rotate();
    t.clock.advance(2 * 3_600_000); // past the id_tokens the old key signed
    expect(await kids('/oauth/discovery/keys')).not.toContain(kid);
    const ticketKeys = await get<{ keys: { kid: string; alg: string }[] }>(t.url, '/check-in/keys');
    expect(ticketKeys.headers.get('access-control-allow-origin')).toBe('*');
    expect(ticketKeys.body.keys.map((k) => k.kid)).toContain(kid);
    // The code mailed before the rotation still checks in.
    expect(await mutate(t, owner, 'checkInAttendee', { code, eventId: event.id }, SCAN)).toMatchObject({ alreadyCheckedIn: false });

    t.clock.advance(401 * 86_400_000);
    expect(await kids('/check-in/keys')).not.toContain(kid);
  });

  it('shows no code to anyone but the registrant, nor for an online event', async () => {
    const event = await createEvent(t, owner, organizerId);
    const { registration } = await ticket(event);
    expect(await codeOf(owner, registration.id)).toBeNull();
    const online = await createEvent(t, owner, organizerId, { format: 'ONLINE' });
    expect((await ticket(online)).code).toBeNull();
  });

  it('checks in by code once; a second scan says already checked in, with the first time', async () => {
    const event = await createEvent(t, owner, organizerId);
    const { attendeeId, code } = await ticket(event);
    const first = await mutate(t, staff, 'checkInAttendee', { code, eventId: event.id }, SCAN);
    expect(first).toMatchObject({ attendee: { id: attendeeId, name: 'Attendee 1' }, alreadyCheckedIn: false, userErrors: [] });
    t.clock.advance(5 * 60_000);
    const second = await mutate(t, staff, 'checkInAttendee', { code }, SCAN);
    expect(second).toEqual({ attendee: first.attendee, alreadyCheckedIn: true, userErrors: [] });
    // By id as well: the same answer.
    const byId = await mutate(t, owner, 'checkInAttendee', { attendeeId }, SCAN);
    expect(byId).toEqual(second);
  });

  it('refuses an altered code, a code for another event, a cancelled ticket, and neither or both of id and code', async () => {
    const event = await createEvent(t, owner, organizerId);
    const { registration, guest, attendeeId, code } = await ticket(event);
    const userError = async (token: string, input: Record<string, unknown>) => {
      const res = await scan(token, input);
      expect(res.body.errors).toBeUndefined();
      const payload = res.body.data?.checkInAttendee;
      expect(payload).toMatchObject({ attendee: null, alreadyCheckedIn: false });
      return payload.userErrors;
    };

    const [header, payload, signature] = code!.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    const other = (await ticket(event)).attendeeId;
    const forged = Buffer.from(JSON.stringify({ ...claims, a: idOfType(other, 'Attendee') })).toString('base64url');
    const flipped = signature!.slice(0, -2) + (signature!.endsWith('AA') ? 'BB' : 'AA');
    // Signed by our own key, but an id_token's type and audience: not a ticket.
    const { kid, privateKey } = await t.get(SigningKeysService).activeKey();
    const idTokenShaped = jwt.sign(claims, privateKey, { algorithm: 'RS256', keyid: kid });
    for (const bad of [
      `${header}.${forged}.${signature}`,
      `${header}.${payload}.${flipped}`,
      idTokenShaped,
      'not a code',
      code!.slice(1),
    ]) {
      expect(await userError(staff, { code: bad })).toEqual([
        {
          field: ['input', 'code'],
          message: 'This is not a valid ticket code: it was altered or not issued here.',
          code: 'INVALID_TICKET_CODE',
        },
      ]);
    }

    // Another organizer's event: its code means nothing to this team.
    const elsewhereOwner = (await createUserWithToken(t)).token;
    const elsewhere = await createEvent(t, elsewhereOwner, (await createOrganizer(t, elsewhereOwner)).id);
    const foreign = await ticket(elsewhere);
    expect(await userError(staff, { code: foreign.code })).toEqual([
      { field: ['input', 'code'], message: 'This ticket is for an event you do not check people in for.', code: 'WRONG_EVENT' },
    ]);
    // The team's other event, at this event's door.
    const sibling = await ticket(await createEvent(t, owner, organizerId));
    expect(await userError(staff, { code: sibling.code, eventId: event.id })).toEqual([
      { field: ['input', 'code'], message: 'This ticket is for another event.', code: 'WRONG_EVENT' },
    ]);

    expect((await userError(staff, {}))[0]).toMatchObject({ code: 'ATTENDEE_OR_CODE_REQUIRED', field: ['input', 'code'] });
    expect((await userError(staff, { code, attendeeId }))[0]).toMatchObject({ code: 'ATTENDEE_OR_CODE_REQUIRED' });

    await mutate(t, guest.token, 'cancelRegistration', { registrationId: registration.id }, 'registration { status }');
    expect(await userError(staff, { code })).toEqual([
      { field: ['input', 'code'], message: 'Only attendees of a confirmed registration can be checked in.', code: 'NOT_CONFIRMED' },
    ]);
    // Someone outside the team learns nothing more from a valid code than from an altered one.
    const stranger = (await createUserWithToken(t)).token;
    expect((await userError(stranger, { code: sibling.code }))[0]).toMatchObject({ code: 'WRONG_EVENT' });
  });

  it('does the same over REST: POST /api/check_ins', async () => {
    const event = await createEvent(t, owner, organizerId);
    const { attendeeId, code } = await ticket(event);
    const call = (token: string, body: unknown) => rest(t.url, 'POST', '/api/check_ins', { privateToken: token, body });
    const first = await call(staff, { code, event_id: idOfType(event.id, 'Event') });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      id: idOfType(attendeeId, 'Attendee'),
      checked_in_at: expect.any(String),
      already_checked_in: false,
    });
    t.clock.advance(60_000);
    const second = await call(staff, { code });
    expect(second.status).toBe(200);
    expect(second.body).toEqual({ ...first.body, already_checked_in: true });

    const tampered = await call(staff, { code: code!.slice(0, -3) + 'abc' });
    expect(tampered.status).toBe(422);
    expect(tampered.body).toMatchObject({ code: 'INVALID_TICKET_CODE', errors: { code: [expect.any(String)] } });
    const elsewhereOwner = (await createUserWithToken(t)).token;
    const foreign = await ticket(await createEvent(t, elsewhereOwner, (await createOrganizer(t, elsewhereOwner)).id));
    const wrong = await call(staff, { code: foreign.code });
    expect(wrong.status).toBe(409);
    expect(wrong.body.code).toBe('WRONG_EVENT');
    const neither = await call(staff, {});
    expect(neither.status).toBe(422);
    expect(neither.body.code).toBe('ATTENDEE_OR_CODE_REQUIRED');
  });
});
