import { Injectable } from '@nestjs/common';
import type { FastifyInstance } from 'fastify';

/**
 * How many HTTP requests this process is answering now: the job workers give way to a burst of them
 * (QueueWorker's `busy`), since a mail can leave a moment later while a person waits for an answer.
 */
@Injectable()
export class RequestLoad {
  private inFlight = 0;

  attach(fastify: FastifyInstance): void {
    fastify.addHook('onRequest', (_request, _reply, done) => {
      this.inFlight++;
      done();
    });
    const finished = (_request: unknown, _reply: unknown, done: () => void) => {
      this.inFlight = Math.max(0, this.inFlight - 1);
      done();
    };
    fastify.addHook('onResponse', finished);
    fastify.addHook('onRequestAbort', (request, done) => finished(request, undefined, done));
  }

  /** Requests received and not yet answered (nor abandoned by their client). */
  get current(): number {
    return this.inFlight;
  }
}
