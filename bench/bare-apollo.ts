// The reference points: a bare @apollo/server (its standalone HTTP server) answering from a constant.
//   bare-apollo.js <port>                      `{ viewer { id name } }` from a constant viewer
//   bare-apollo.js <port> events <data.json>   the product's schema, `events` answering the `data.events`
//                                              of a response Agora gave, so the bare server executes the
//                                              identical document over the identical values
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

const [portArg, mode, dataFile] = process.argv.slice(2);

function viewerServer(): ApolloServer {
  return new ApolloServer({
    typeDefs: 'type Query { viewer: User! } type User { id: ID! name: String! }',
    resolvers: { Query: { viewer: () => ({ id: '00000000-0000-0000-0000-000000000001', name: 'Ada Lovelace' }) } },
  });
}

function eventsServer(): ApolloServer {
  const root = resolve(import.meta.dirname, '..', '..');
  const data = JSON.parse(readFileSync(dataFile!, 'utf8')) as { events: unknown };
  return new ApolloServer({
    typeDefs: readFileSync(join(root, 'schema.graphql'), 'utf8'),
    resolvers: { Query: { events: () => data.events } },
  });
}

const server = mode === 'events' ? eventsServer() : viewerServer();
const port = Number(portArg ?? 4100);
const { url } = await startStandaloneServer(server, { listen: { port, host: '127.0.0.1' } });
console.log(JSON.stringify({ ready: url }));
