/** Injection token for the opened DatabaseTarget (owned by the process, see main.ts). */
export const DATABASE_TARGET = Symbol('DATABASE_TARGET');
