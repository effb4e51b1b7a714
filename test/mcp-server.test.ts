import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import * as oauth from 'oauth4webapi';
import { Metrics } from '../src/metrics/metrics.js';
import type { User } from '../src/users/user.model.js';
import { createUserWithToken } from './support/fixtures.js';
import { uniqueSlug } from './support/events.js';
import { graphql, rest } from './support/http.js';
import { McpHostOAuthProvider } from './support/mcp-host.js';
import { startTestApp, TestApp } from './support/test-app.js';

const DAY = 86_400_000;

let t: TestApp;
let owner: { token: string; user: User };
let attendee: { token: string; user: User };
let published: { id: string; slug: string; ticketTypeId: string };
let draft: { id: string; slug: string };

const call = (method: string, path: string, token: string, body?: unknown) => rest(t.url, method, path, { privateToken: token, body });

async function newEvent(token: string, organizerId: string, title: string, publish: boolean) {
  const startsAt = new Date(t.clock.now().getTime() + 7 * DAY);
  const created = await call('POST', '/api/events', token, {
    organizer_id: organizerId,
    title,
    starts_at: startsAt.toISOString(),
    ends_at: new Date(startsAt.getTime() + 7_200_000).toISOString(),
    time_zone: 'Europe/Paris',
    format: 'online',
    online_url: 'https://example.com/live',
    capacity: 50,
  });
  expect(created.status).toBe(201);
  const ticket = await call('POST', `/api/events/${created.body.id}/ticket_types`, token, {
    name: 'Seat',
    price: { amount: 0, currency: 'EUR' },
  });
  expect(ticket.status).toBe(201);
  if (publish) expect((await call('POST', `/api/events/${created.body.id}/publish`, token)).status).toBe(200);
  return { id: created.body.id as string, slug: created.body.slug as string, ticketTypeId: ticket.body.id as string };
}

async function newOrganizer(token: string, name: string): Promise<string> {
  const created = await call('POST', '/api/organizers', token, { slug: uniqueSlug('mcp'), name });
  expect(created.status).toBe(201);
  return created.body.id as string;
}

beforeAll(async () => {
  t = await startTestApp({ OAUTH_DYNAMIC_REGISTRATION: 'true' });
  owner = await createUserWithToken(t);
  attendee = await createUserWithToken(t);
  const organizerId = await newOrganizer(owner.token, 'MCP Meetups');
  published = await newEvent(owner.token, organizerId, 'Model Context Night', true);
  draft = await newEvent(owner.token, organizerId, 'Secret planning session', false);
});
afterAll(() => t.close());

/** Every request an MCP client sends, as `METHOD /path`. */
function recordingFetch(requests: string[]) {
  return (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(input instanceof Request ? input.url : input);
    requests.push(`${init?.method ?? (input instanceof Request ? input.method : 'GET')} ${url.pathname}`);
    return fetch(input, init);
  };
}

async function tokenClient(token: string): Promise<Client> {
  const client = new Client({ name: 'agora-test', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
  );
  return client;
}

type ToolResult = { isError?: boolean; structuredContent?: any; content: { type: string; text?: string }[] };

describe('the MCP server at /mcp, driven by an MCP host (@modelcontextprotocol/sdk) given only its URL', () => {
  it('answers 401, and the host discovers, registers, signs the user in, lists tools, calls them and refreshes', async () => {
    const requests: string[] = [];
    const provider = new McpHostOAuthProvider(t, attendee.user, {
      clientName: 'MCP host under test',
      grantTypes: ['authorization_code', 'refresh_token'],
    });
    const serverUrl = new URL(`${t.url}/mcp`);
    const fetchFn = recordingFetch(requests);

    const client = new Client({ name: 'mcp-host', version: '1.0.0' });
    await expect(client.connect(new StreamableHTTPClientTransport(serverUrl, { authProvider: provider, fetch: fetchFn }))).rejects.toThrow(
      UnauthorizedError,
    );
    // The 401 named /mcp's own metadata (RFC 9728), which named Agora as the authorization server (RFC 8414);
    // the host registered itself (RFC 7591) and sent the user to the browser with PKCE and the resource.
    expect(requests).toEqual([
      'POST /mcp',
      'GET /.well-known/oauth-protected-resource/mcp',
      'GET /.well-known/oauth-authorization-server',
      'POST /oauth/register',
    ]);
    const authorization = provider.authorizations[0]!;
    expect(authorization.searchParams.get('resource')).toBe(`${t.url}/mcp`);
    expect(authorization.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorization.searchParams.get('scope')).toBe('api offline_access');

    // Back from the browser: the host exchanges the code and connects again.
    const transport = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider, fetch: fetchFn });
    await transport.finishAuth(provider.callback!.searchParams.get('code')!);
    expect(provider.saved).toMatchObject({ token_type: 'Bearer', scope: 'api offline_access' });
    expect(provider.saved!.refresh_token).toBeTruthy();
    await client.connect(transport);
    expect(client.getServerVersion()).toMatchObject({ name: 'agora' });
    expect(client.getInstructions()).toContain('find_events');

    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      'cancel_registration',
      'check_in_attendee',
      'event_registrations',
      'find_events',
      'get_event',
      'my_registrations',
      'register_for_event',
    ]);
    const findEvents = tools.find((tool) => tool.name === 'find_events')!;
    expect(findEvents.annotations).toMatchObject({ readOnlyHint: true });
    expect(findEvents.inputSchema.properties).toHaveProperty('search');
    expect(findEvents.outputSchema).toBeDefined();

    const found = (await client.callTool({ name: 'find_events', arguments: { search: 'model context' } })) as ToolResult;
    expect(found.isError).toBeFalsy();
    expect(found.structuredContent.events.map((e: { id: string }) => e.id)).toEqual([published.id]);
    expect(found.structuredContent).toMatchObject({ page: 1, total: 1, total_pages: 1 });
    expect(JSON.parse(found.content[0]!.text!)).toEqual(found.structuredContent);

    const details = (await client.callTool({ name: 'get_event', arguments: { event: published.slug } })) as ToolResult;
    expect(details.structuredContent.event).toMatchObject({ id: published.id, status: 'published', online_url: null });
    expect(details.structuredContent.ticket_types).toEqual([expect.objectContaining({ id: published.ticketTypeId, name: 'Seat' })]);

    // A scoped write, for the signed-in user.
    const registered = (await client.callTool({
      name: 'register_for_event',
      arguments: {
        event: published.id,
        ticket_type_id: published.ticketTypeId,
        attendees: [{ name: attendee.user.name, email: attendee.user.email }],
      },
    })) as ToolResult;
    expect(registered.isError).toBeFalsy();
    expect(registered.structuredContent.registration).toMatchObject({
      status: 'confirmed',
      event_id: published.id,
      user: { id: attendee.user.id },
    });
    // What GraphQL shows the same user.
    const viewer = await graphql(t.url, '{ viewer { registrations(first: 5) { nodes { referenceCode status } } } }', {
      privateToken: attendee.token,
    });
    expect(viewer.body.data?.viewer).toMatchObject({
      registrations: { nodes: [{ referenceCode: registered.structuredContent.registration.reference_code, status: 'CONFIRMED' }] },
    });
    // The token the host got for {base_url}/mcp is for Agora's API: GraphQL takes it too.
    const sameToken = await graphql(t.url, '{ viewer { id } }', { bearer: provider.saved!.access_token });
    expect(sameToken.body.data?.viewer).toEqual({ id: attendee.user.id });
    const mine = (await client.callTool({ name: 'my_registrations', arguments: {} })) as ToolResult;
    expect(mine.structuredContent.registrations.map((r: { id: string }) => r.id)).toEqual([registered.structuredContent.registration.id]);

    // An hour later the access token has expired: the host refreshes it without the browser.
    const first = provider.saved!.access_token;
    t.clock.advance(3_601_000);
    requests.length = 0;
    const again = (await client.callTool({ name: 'find_events', arguments: { search: 'model context' } })) as ToolResult;
    expect(again.structuredContent.total).toBe(1);
    expect(requests).toContain('POST /oauth/token');
    expect(provider.authorizations).toHaveLength(1);
    expect(provider.saved!.access_token).not.toBe(first);

    const cancelled = (await client.callTool({
      name: 'cancel_registration',
      arguments: { registration_id: registered.structuredContent.registration.id },
    })) as ToolResult;
    expect(cancelled.structuredContent.registration).toMatchObject({ status: 'cancelled', cancelled_by: 'attendee' });
    await client.close();
  });
});

describe('scopes', () => {
  it('lists only the reads to a read_api token, and refuses a write with 403 insufficient_scope naming the scope', async () => {
    const reader = await createUserWithToken(t, ['read_api']);
    const client = await tokenClient(reader.token);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(['event_registrations', 'find_events', 'get_event', 'my_registrations']);
    await client.close();
    // The API's other header for personal tokens works here too.
    const viaPrivateToken = new Client({ name: 'agora-test', version: '1.0.0' });
    await viaPrivateToken.connect(
      new StreamableHTTPClientTransport(new URL(`${t.url}/mcp`), { requestInit: { headers: { 'private-token': reader.token } } }),
    );
    expect((await viaPrivateToken.listTools()).tools).toHaveLength(4);
    await viaPrivateToken.close();

    const res = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${reader.token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'register_for_event', arguments: { event: published.id, ticket_type_id: published.ticketTypeId, attendees: [] } },
      }),
    });
    expect(res.status).toBe(403);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", scope="api", resource_metadata="${t.url}/.well-known/oauth-protected-resource/mcp"`,
    );
    expect(await res.json()).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: '403 Forbidden' }, id: null });
  });
});

describe('access rules: a tool refuses what GraphQL refuses the same user', () => {
  it('hides an unpublished event from everyone but its organizer', async () => {
    const client = await tokenClient(attendee.token);
    const refused = (await client.callTool({ name: 'get_event', arguments: { event: draft.id } })) as ToolResult;
    expect(refused.isError).toBe(true);
    expect(refused.content[0]!.text).toBe('EVENT_NOT_FOUND: No event with this id exists, or you may not see it.');
    const viaGraphql = await graphql(t.url, `{ event(slug: "${draft.slug}") { id } }`, { privateToken: attendee.token });
    expect(viaGraphql.body.data).toEqual({ event: null });
    await client.close();

    const organizer = await tokenClient(owner.token);
    const shown = (await organizer.callTool({ name: 'get_event', arguments: { event: draft.slug } })) as ToolResult;
    expect(shown.structuredContent.event).toMatchObject({ id: draft.id, status: 'draft' });
    await organizer.close();
  });

  it("refuses another organizer's attendees and check-ins", async () => {
    const client = await tokenClient(attendee.token);
    const listed = (await client.callTool({ name: 'event_registrations', arguments: { event: published.id } })) as ToolResult;
    expect(listed.isError).toBe(true);
    expect(listed.content[0]!.text).toMatch(/^FORBIDDEN: /);
    const viaGraphql = await graphql(t.url, `{ event(slug: "${published.slug}") { registrations(first: 1) { nodes { id } } } }`, {
      privateToken: attendee.token,
    });
    expect(viaGraphql.body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');

    const registration = await call('POST', `/api/events/${published.id}/registrations`, attendee.token, {
      ticket_type_id: published.ticketTypeId,
      attendees: [{ name: 'Door guest', email: 'door@example.com' }],
    });
    const attendeeId = registration.body.attendees[0].id as string;
    const checkIn = (await client.callTool({ name: 'check_in_attendee', arguments: { attendee_id: attendeeId } })) as ToolResult;
    expect(checkIn.isError).toBe(true);
    expect(checkIn.content[0]!.text).toBe('FORBIDDEN: You do not have the role needed to check attendees in.');
    await client.close();

    // The organizer's team may.
    const organizer = await tokenClient(owner.token);
    const admitted = (await organizer.callTool({
      name: 'check_in_attendee',
      arguments: { attendee_id: attendeeId, event: published.slug },
    })) as ToolResult;
    expect(admitted.structuredContent.check_in).toMatchObject({ id: attendeeId, already_checked_in: false });
    const registrations = (await organizer.callTool({
      name: 'event_registrations',
      arguments: { event: published.id, status: 'confirmed' },
    })) as ToolResult;
    expect(registrations.structuredContent.registrations.map((r: { id: string }) => r.id)).toContain(registration.body.id);
    await organizer.close();
  });
});

describe('the endpoint over HTTP', () => {
  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body,
    });

  it('answers an anonymous request 401 with the RFC 9728 challenge for /mcp, and serves that metadata', async () => {
    const res = await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer scope="api offline_access", resource_metadata="${t.url}/.well-known/oauth-protected-resource/mcp"`,
    );
    expect(await res.json()).toEqual({ jsonrpc: '2.0', error: { code: -32000, message: '401 Unauthorized' }, id: null });

    const bad = await post('{}', { authorization: 'Bearer agora_not_a_token' });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token", /);
  });

  it("passes oauth4webapi's strict RFC 9728 discovery for /mcp", async () => {
    const resource = new URL(`${t.url}/mcp`);
    const response = await oauth.resourceDiscoveryRequest(resource, { [oauth.allowInsecureRequests]: true });
    const metadata = await oauth.processResourceDiscoveryResponse(resource, response);
    expect(metadata).toMatchObject({ resource: `${t.url}/mcp`, authorization_servers: [t.url], bearer_methods_supported: ['header'] });
  });

  it('answers bad input with JSON-RPC errors: a body that is not JSON, bad arguments, an unknown tool, GET and DELETE', async () => {
    const auth = { authorization: `Bearer ${attendee.token}`, 'mcp-protocol-version': '2025-06-18' };
    const notJson = await post('{"jsonrpc": ', auth);
    expect(notJson.status).toBe(400);
    expect(await notJson.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32700 }, id: null });

    const badArguments = await post(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'find_events', arguments: { per_page: 1000, starts_after: 'soon' } },
      }),
      auth,
    );
    expect(badArguments.status).toBe(200);
    const badBody = (await badArguments.json()) as { result: ToolResult };
    // The SDK checks the arguments against the tool's schema, and says what is wrong with each.
    expect(badBody.result.isError).toBe(true);
    expect(badBody.result.content[0]!.text).toMatch(/Invalid ISO datetime at starts_after/);
    expect(badBody.result.content[0]!.text).toMatch(/expected number to be <=50 at per_page/);

    // Arguments or parameters that are not an object: invalid params (-32602), naming what is wrong.
    for (const [id, params, says] of [
      [4, { name: 'find_events', arguments: ['search', 'x'] }, /^Invalid params: params\.arguments must be an object/],
      [5, { name: 'find_events', arguments: 'search=x' }, /^Invalid params: params\.arguments must be an object/],
      [6, { name: 'find_events', arguments: null }, /^Invalid params: params\.arguments must be an object/],
      [7, 'find_events', /^Invalid params: params must be an object/],
      [8, { name: 42 }, /^Invalid params: params\.name must be/],
    ] as const) {
      const res = await post(JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params }), auth);
      expect({ id, status: res.status }).toEqual({ id, status: 200 });
      expect(((await res.clone().json()) as { error: { message: string } }).error.message).toMatch(says);
      expect(await res.json()).toMatchObject({
        jsonrpc: '2.0',
        id,
        error: { code: -32602, message: expect.stringMatching(/params|arguments|name/) },
      });
    }

    // The same as a notification (no id): no answer.
    const notification = await post(JSON.stringify({ jsonrpc: '2.0', method: 'tools/call', params: 'find_events' }), auth);
    expect(notification.status).toBe(202);
    expect(await notification.text()).toBe('');

    const unknown = await post(
      JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'drop_tables', arguments: {} } }),
      auth,
    );
    const unknownBody = (await unknown.json()) as { result?: ToolResult; error?: { message: string } };
    expect(unknownBody.error?.message ?? unknownBody.result?.content[0]?.text).toMatch(/drop_tables/);

    for (const method of ['GET', 'DELETE']) {
      const res = await fetch(`${t.url}/mcp`, { method, headers: auth });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toBe('POST');
    }
  });

  it('counts tool calls in the metrics, by tool and outcome', async () => {
    const scrape = await t.get(Metrics).scrape();
    expect(scrape).toMatch(/agora_mcp_tool_calls_total\{tool="find_events",outcome="ok"\} [1-9]/);
    expect(scrape).toMatch(/agora_mcp_tool_calls_total\{tool="get_event",outcome="refused"\} [1-9]/);
    expect(scrape).toMatch(/agora_mcp_tool_call_duration_seconds_count\{tool="register_for_event"\} [1-9]/);
  });
});
