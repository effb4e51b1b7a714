// The event listing's peer: PostGraphile 5 on the bench's own database, the tables Agora reads, in a
// process of its own (NODE_ENV=production, as Agora runs).
//   postgraphile.js <port> <database url>
// It answers POSTGRAPHILE_PAGE (bench/postgraphile-listing.ts) with the page Agora's EVENT_PAGE answers: the first 50 published
// public events starting at or after $after, by start time then id, each with its organizer's name and
// slug and its ticket types that are not hidden (by creation, then id), with the seats and tickets left.
// PostGraphile shows a database's own shape, so what Agora computes in code is given to it the way
// PostGraphile is meant to be extended, as SQL functions (created here, in the bench's database):
// `upcoming_events` is Agora's listing filter and order, inlined by PostgreSQL into PostGraphile's query
// (so it uses the same partial index), and the computed columns are the same subtractions Agora makes.
import { createServer, Server } from 'node:http';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import pg from 'pg';

// PostGraphile 5 asks for Node 22; on Node 20 the one thing it misses is Promise.withResolvers (without
// it every query answers an internal error). The same few lines as engines that have it.
const promises = Promise as unknown as { withResolvers?: () => unknown };
promises.withResolvers ??= () => {
  let resolve!: (value: unknown) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
};

// PostGraphile is installed in bench/peers (withPostgraphile runs `npm ci` there), not among the project's
// dependencies: its engines exclude Node 20, and the project installs without engine warnings there.
const peers = createRequire(new URL('../../bench/peers/package.json', import.meta.url));
const fromPeers = <T>(specifier: string): Promise<T> => import(pathToFileURL(peers.resolve(specifier)).href) as Promise<T>;
type Preset = object;
const { postgraphile } = await fromPeers<{
  postgraphile(preset: object): { createServ(grafserv: unknown): { addTo(server: Server): void } };
}>('postgraphile');
const { makePgService } = await fromPeers<{ makePgService(options: object): object }>('postgraphile/adaptors/pg');
const { grafserv } = await fromPeers<{ grafserv: unknown }>('postgraphile/grafserv/node');
const { PostGraphileAmberPreset } = await fromPeers<{ PostGraphileAmberPreset: Preset }>('postgraphile/presets/amber');

const FUNCTIONS = `
CREATE OR REPLACE FUNCTION public.upcoming_events(starts_after timestamptz) RETURNS SETOF public.events LANGUAGE sql STABLE AS $$
  SELECT * FROM public.events e WHERE e.status = 'published' AND e.visibility = 'public' AND e.starts_at >= starts_after
   ORDER BY e.starts_at, e.id $$;
CREATE OR REPLACE FUNCTION public.events_spots_left(e public.events) RETURNS integer LANGUAGE sql STABLE AS $$
  SELECT e.capacity - e.confirmed_seats $$;
CREATE OR REPLACE FUNCTION public.events_listed_ticket_types(e public.events) RETURNS SETOF public.ticket_types LANGUAGE sql STABLE AS $$
  SELECT * FROM public.ticket_types t WHERE t.event_id = e.id AND NOT t.hidden ORDER BY t.created_at, t.id $$;
CREATE OR REPLACE FUNCTION public.ticket_types_remaining(t public.ticket_types) RETURNS integer LANGUAGE sql STABLE AS $$
  SELECT t.quantity - t.sold $$;`;

const [portArg, connectionString] = process.argv.slice(2);
if (!portArg || !connectionString) throw new Error('usage: postgraphile.js <port> <database url>');

const client = new pg.Client({ connectionString });
await client.connect();
await client.query(FUNCTIONS);
await client.end();

const pgl = postgraphile({
  extends: [PostGraphileAmberPreset],
  pgServices: [makePgService({ connectionString, schemas: ['public'] })],
  grafserv: { graphqlPath: '/graphql', graphiql: false },
});
const serv = pgl.createServ(grafserv);
const server = createServer();
serv.addTo(server);
const port = Number(portArg);
await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
console.log(JSON.stringify({ ready: `http://127.0.0.1:${port}/graphql` }));
