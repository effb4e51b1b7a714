import { jest } from '@jest/globals';
import { RepeatedFailureLog } from './repeated-failures.js';

function fakeRequest() {
  const lines: { fields: Record<string, unknown>; message: string; from: 'request' | 'server' }[] = [];
  const logger = (from: 'request' | 'server') => ({
    warn: (fields: Record<string, unknown>, message: string) => lines.push({ fields, message, from }),
  });
  return { lines, request: { log: logger('request'), server: { log: logger('server') } } as never };
}

describe('RepeatedFailureLog', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('logs the first failure at once and the rest of the interval as one line with a count', () => {
    const log = new RepeatedFailureLog(10_000);
    const { lines, request } = fakeRequest();
    for (let i = 0; i < 500; i++) log.warn(request, 'db', { err: 'x' }, 'Database unavailable');
    expect(lines).toEqual([{ fields: { err: 'x' }, message: 'Database unavailable', from: 'request' }]);
    jest.advanceTimersByTime(10_000);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatchObject({
      fields: { repeated: 499 },
      message: 'Database unavailable (499 more in the last 10 s)',
      from: 'server',
    });
    log.warn(request, 'db', {}, 'Database unavailable');
    expect(lines).toHaveLength(3);
  });

  it('says nothing more when the failure did not repeat, and counts different failures apart', () => {
    const log = new RepeatedFailureLog(1_000);
    const { lines, request } = fakeRequest();
    log.warn(request, 'a', {}, 'A');
    log.warn(request, 'b', {}, 'B');
    jest.advanceTimersByTime(1_000);
    expect(lines.map((l) => l.message)).toEqual(['A', 'B']);
  });
});
