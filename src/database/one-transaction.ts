import { DataSource } from 'typeorm';

/**
 * Runs `work`, which may call any number of services, in one transaction on one connection, so that
 * it commits whole or not at all. Meanwhile every statement of the data source goes there: queries,
 * repositories, and the services' own transactions, which become savepoints. So this is for a process
 * that runs nothing else meanwhile (a CLI command), never for the server. `work` must not carry on
 * after a statement of its own failed: PostgreSQL refuses the rest of the transaction.
 *
 * Once `signal` is aborted the next statement fails with its reason, the transaction is rolled back
 * and that reason is thrown; a statement already running finishes first. From the commit on, the
 * signal changes nothing.
 */
export async function inOneTransaction<T>(dataSource: DataSource, work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  const runner = dataSource.createQueryRunner();
  const { query, release } = runner;
  const createQueryRunner = dataSource.createQueryRunner;
  runner.query = async (...args: Parameters<typeof query>) => {
    signal?.throwIfAborted();
    return query.apply(runner, args);
  };
  // The services release the runner after each statement or transaction of theirs: it stays ours.
  runner.release = async () => undefined;
  dataSource.createQueryRunner = () => runner;
  try {
    await runner.startTransaction();
    const result = await work();
    await runner.commitTransaction();
    return result;
  } catch (err) {
    // A failed savepoint may have left TypeORM's count of them behind: end the transaction itself. On
    // a connection that failed, the database has rolled it back already.
    if (runner.isTransactionActive) await query.call(runner, 'ROLLBACK').catch(() => undefined);
    throw signal?.aborted ? signal.reason : err;
  } finally {
    dataSource.createQueryRunner = createQueryRunner;
    await release.call(runner);
  }
}
