import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { KeyObject } from 'node:crypto';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { SigningAlg } from './signing-algorithms.js';

// The worker's code, as CommonJS text: it imports the same jose as the rest of the service, resolved
// from here, so it works from the compiled service and from the TypeScript sources in tests. Keys are
// stored before the first await, so a key always arrives before the messages that use it.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { pathToFileURL } = require('node:url');
const jose = import(pathToFileURL(workerData.jose).href);
const keys = new Map();
parentPort.on('message', async (message) => {
  if (message.key) keys.set(message.kid, message.key);
  try {
    const { SignJWT } = await jose;
    const header = { alg: message.alg, kid: message.kid, ...(message.typ ? { typ: message.typ } : {}) };
    parentPort.postMessage({ id: message.id, token: await new SignJWT(message.claims).setProtectedHeader(header).sign(keys.get(message.kid)) });
  } catch (err) {
    parentPort.postMessage({ id: message.id, error: String(err && err.message || err) });
  }
});
`;

/** What a JWT is signed with: the key's id and algorithm, and the header's `typ` when it has one. */
export interface SigningOptions {
  kid: string;
  alg: SigningAlg;
  /** The JWS `typ` header (RFC 9068: `at+jwt`); none for an id_token. */
  typ?: string;
}

/**
 * Signs JWTs (id_tokens, JWT access tokens) on a thread of its own: a signature costs about as much CPU
 * as the rest of a code exchange on the main thread, or more (docs/benchmarks.md, RS256), and it needs
 * nothing but the claims and the key, so the main thread keeps serving requests meanwhile.
 * The private key crosses to the worker once per key id, as a KeyObject (cloned, never exported).
 */
@Injectable()
export class SigningThread implements OnModuleDestroy {
  private worker?: Worker;
  private readonly keysSent = new Set<string>();
  private readonly pending = new Map<number, { resolve: (token: string) => void; reject: (err: Error) => void }>();
  private nextId = 0;

  sign(claims: Record<string, unknown>, privateKey: KeyObject, { kid, alg, typ }: SigningOptions): Promise<string> {
    const worker = this.start();
    const id = this.nextId++;
    const message: Record<string, unknown> = { id, kid, alg, typ, claims };
    if (!this.keysSent.has(kid)) {
      message.key = privateKey;
      this.keysSent.add(kid);
    }
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.pending.size === 1) worker.ref();
      worker.postMessage(message);
    });
  }

  async onModuleDestroy(): Promise<void> {
    await this.worker?.terminate();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { jose: createRequire(import.meta.url).resolve('jose') },
    });
    worker.on('message', ({ id, token, error }: { id: number; token?: string; error?: string }) => {
      const waiting = this.pending.get(id);
      this.pending.delete(id);
      // An idle worker must not keep the process alive.
      if (this.pending.size === 0) worker.unref();
      if (token !== undefined) waiting?.resolve(token);
      else waiting?.reject(new Error(`JWT signing failed: ${error}`));
    });
    worker.on('error', (err) => this.fail(err));
    worker.on('exit', () => this.fail(new Error('The signing thread stopped')));
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private fail(err: Error): void {
    for (const { reject } of this.pending.values()) reject(err);
    this.pending.clear();
    this.keysSent.clear();
    this.worker = undefined;
  }
}
