import { InterruptedError } from './cli-error.js';

/**
 * Runs `work` with a signal that SIGINT or SIGTERM aborts, with an InterruptedError saying `outcome`,
 * instead of ending the process there and then: `work` gets to undo what it began. A second signal
 * ends the process at once, as without this.
 */
export async function interruptible<T>(work: (signal: AbortSignal) => Promise<T>, outcome: string): Promise<T> {
  const controller = new AbortController();
  const stop = (signal: 'SIGINT' | 'SIGTERM') => {
    ignore();
    controller.abort(new InterruptedError(signal, outcome));
  };
  const onSigint = () => stop('SIGINT');
  const onSigterm = () => stop('SIGTERM');
  const ignore = () => process.off('SIGINT', onSigint).off('SIGTERM', onSigterm);
  process.on('SIGINT', onSigint).on('SIGTERM', onSigterm);
  try {
    return await work(controller.signal);
  } finally {
    ignore();
  }
}
