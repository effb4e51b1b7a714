import { fromGlobalId } from '../../../src/graphql/global-id.js';
import { createEvent, createOrganizer, registerFor, registrationOf } from '../../support/events.js';
import { createUserWithToken } from '../../support/fixtures.js';
import { graphql } from '../../support/http.js';
import { registerApp, RegisteredApp } from '../../support/oauth.js';
import { PersonalTokensService } from '../../../src/personal-tokens/personal-tokens.service.js';
import type { TestApp } from '../../support/test-app.js';
import type { Pools } from './graphql-documents.js';

/**
 * What the fuzzers aim at: real users, tokens, an organizer with a published and a draft event, a
 * registration and an OAuth application, so that generated requests mix real identifiers with junk
 * and get past the first lookup into the services.
 */
export interface World {
  /** An `api` token of the organizer's owner, and a `read_api` one. */
  token: string;
  readToken: string;
  username: string;
  /** A second user, registered for the event. */
  attendeeToken: string;
  attendeeUsername: string;
  organizer: { id: string; slug: string };
  event: { id: string; slug: string; ticketTypeId: string };
  draft: { id: string; slug: string; ticketTypeId: string };
  registrationId: string;
  attendeeId: string;
  app: RegisteredApp;
  pools: Pools;
  /** The uuids behind the global IDs, for the REST API. */
  uuids: string[];
}

export async function buildWorld(t: TestApp): Promise<World> {
  const owner = await createUserWithToken(t, ['api']);
  const { token: readToken } = await t.get(PersonalTokensService).create(owner.user.id, { name: 'read', scopes: ['read_api'] });
  const attendee = await createUserWithToken(t, ['api']);
  const organizer = await createOrganizer(t, owner.token);
  const event = await createEvent(t, owner.token, organizer.id, { capacity: 5 });
  const draft = await createEvent(t, owner.token, organizer.id, { publish: false });
  const registration = registrationOf(await registerFor(t, attendee.token, event, 2));
  const app = await registerApp(t, owner.user.id);

  const cursors: string[] = [];
  const listed = await graphql(
    t.url,
    `{ events(first: 2) { edges { cursor } } viewer { registrations(first: 1) { edges { cursor } } }
       organizer(slug: "${organizer.slug}") { members(first: 1) { edges { cursor } } } }`,
    { privateToken: attendee.token },
  );
  const data = listed.body.data ?? {};
  for (const edge of [...(data.events?.edges ?? []), ...(data.viewer?.registrations?.edges ?? [])]) cursors.push(edge.cursor);
  const ownerView = await graphql(t.url, `{ organizer(slug: "${organizer.slug}") { members(first: 1) { edges { cursor } } } }`, {
    privateToken: owner.token,
  });
  for (const edge of ownerView.body.data?.organizer?.members?.edges ?? []) cursors.push(edge.cursor);
  if (cursors.length === 0) throw new Error(`no cursors: ${JSON.stringify(listed.body)}`);

  const ids = [organizer.id, event.id, event.ticketTypeId, draft.id, draft.ticketTypeId, registration.id, registration.attendees[0].id];
  return {
    token: owner.token,
    readToken,
    username: owner.user.username,
    attendeeToken: attendee.token,
    attendeeUsername: attendee.user.username,
    organizer,
    event,
    draft,
    registrationId: registration.id,
    attendeeId: registration.attendees[0].id,
    app,
    pools: {
      ids,
      idsOf: {
        Organizer: [organizer.id],
        Event: [event.id, draft.id],
        TicketType: [event.ticketTypeId, draft.ticketTypeId],
        Registration: [registration.id],
        Attendee: [registration.attendees[0].id],
      },
      slugs: [organizer.slug, event.slug, draft.slug],
      usernames: [owner.user.username, attendee.user.username],
      cursors,
    },
    uuids: ids.map((id) => fromGlobalId(id)!.id),
  };
}
