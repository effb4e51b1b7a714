import { QueryFailedError } from 'typeorm';
import { isDatabaseUnavailable, PoolWaitTimeoutError } from './database-unavailable.js';

const withCode = (code: string, message = 'failed') => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  it.each([
    ['a refused connection', withCode('ECONNREFUSED')],
    ['a reset connection', withCode('ECONNRESET')],
    ['the server shutting down (57P01)', withCode('57P01', 'terminating connection due to administrator command')],
    ['the server starting up (57P03)', withCode('57P03', 'the database system is starting up')],
    ['a connection exception (08006)', withCode('08006')],
    ['too many connections (53300)', withCode('53300')],
    ["node-postgres's lost connection", new Error('Connection terminated unexpectedly')],
    ["pg-pool's connect timeout", new Error('timeout exceeded when trying to connect')],
    ['a statement cancelled by statement_timeout (57014)', withCode('57014', 'canceling statement due to statement timeout')],
    ['a transaction ended by idle_in_transaction_session_timeout (25P03)', withCode('25P03')],
    ["pg's query_timeout (no answer in time)", new Error('Query read timeout')],
    ['a wait for a pooled connection past its bound', new QueryFailedError('SELECT 1', [], new PoolWaitTimeoutError(2000))],
    ['a driver error inside a TypeORM error', new QueryFailedError('SELECT 1', [], withCode('57P01'))],
    ['an Error cause', new Error('wrapped', { cause: withCode('ECONNREFUSED') })],
    ["graphql-js's wrapper of a non-Error", { message: 'Unexpected error value', thrownValue: { code: 'ECONNREFUSED' } }],
  ])('is true for %s', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', new QueryFailedError('INSERT', [], withCode('23505'))],
    ['a syntax error', new QueryFailedError('SELEC', [], withCode('42601'))],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['nothing', undefined],
    ['a string', 'ECONNREFUSED'],
  ])('is false for %s', (_name, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
