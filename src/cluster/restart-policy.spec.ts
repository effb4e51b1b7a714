import { RestartPolicy } from './restart-policy.js';

const options = { quickExitMs: 10_000, maxQuickExits: 5, firstDelayMs: 500, maxDelayMs: 3_000 };

describe('RestartPolicy', () => {
  it('replaces a worker that ran a while at once, however often that happens', () => {
    const policy = new RestartPolicy(options);
    for (let i = 0; i < 20; i++) expect(policy.exited(60_000)).toEqual({ action: 'restart', delayMs: 0, quickExits: 0 });
  });

  it('backs off, doubling, from the first worker that dies within seconds of its start, and gives up at the fifth in a row', () => {
    const policy = new RestartPolicy(options);
    expect([1, 2, 3, 4].map(() => policy.exited(2_000))).toEqual([
      { action: 'restart', delayMs: 500, quickExits: 1 },
      { action: 'restart', delayMs: 1_000, quickExits: 2 },
      { action: 'restart', delayMs: 2_000, quickExits: 3 },
      { action: 'restart', delayMs: 3_000, quickExits: 4 },
    ]);
    expect(policy.exited(9_999)).toEqual({ action: 'give-up', quickExits: 5 });
  });

  it('starts counting again once a worker has lived past the quick-exit window', () => {
    const policy = new RestartPolicy(options);
    for (let i = 0; i < 4; i++) policy.exited(1_000);
    policy.stable();
    expect(policy.exited(1_000)).toEqual({ action: 'restart', delayMs: 500, quickExits: 1 });
    for (let i = 0; i < 3; i++) policy.exited(1_000);
    expect(policy.exited(10_000)).toEqual({ action: 'restart', delayMs: 0, quickExits: 0 });
    expect(policy.exited(1_000)).toEqual({ action: 'restart', delayMs: 500, quickExits: 1 });
  });
});
