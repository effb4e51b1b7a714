import { shutdownPhases } from './shutdown-phases.js';

describe('shutdownPhases', () => {
  it('keeps the last 2 s of the default 10 s bound for closing, and idle connections open for 1 s', () => {
    expect(shutdownPhases(10_000)).toEqual({ idleGraceMs: 1000, drainMs: 8000, exitMs: 10_000 });
  });

  it('keeps a fifth of a short bound for closing and half the drain for idle connections', () => {
    expect(shutdownPhases(1000)).toEqual({ idleGraceMs: 400, drainMs: 800, exitMs: 1000 });
    expect(shutdownPhases(2000)).toEqual({ idleGraceMs: 800, drainMs: 1600, exitMs: 2000 });
  });

  it('never keeps more than 2 s for closing on a long bound', () => {
    expect(shutdownPhases(600_000)).toEqual({ idleGraceMs: 1000, drainMs: 598_000, exitMs: 600_000 });
  });
});
