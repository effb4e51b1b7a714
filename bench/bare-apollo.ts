// The reference point: a bare @apollo/server answering `{ viewer { id name } }` from a constant.
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';

const server = new ApolloServer({
  typeDefs: 'type Query { viewer: User! } type User { id: ID! name: String! }',
  resolvers: { Query: { viewer: () => ({ id: '00000000-0000-0000-0000-000000000001', name: 'Ada Lovelace' }) } },
});
const port = Number(process.argv[2] ?? 4100);
const { url } = await startStandaloneServer(server, { listen: { port, host: '127.0.0.1' } });
console.log(JSON.stringify({ ready: url }));
