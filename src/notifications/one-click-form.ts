import busboy from 'busboy';
import { errorCodes, type FastifyInstance } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { DomainError } from '../errors/domain-error.js';

/** Where mail apps post a one-click unsubscribe (RFC 8058), with the signed token in the query. */
export const ONE_CLICK_PATH = '/mail/unsubscribe';

/** A one-click form is one short field; anything much larger is not one. */
const MAX_FORM_BYTES = 16 * 1024;

/**
 * RFC 8058 asks mail apps to post `List-Unsubscribe=One-Click` as `multipart/form-data` (they may send it
 * url-encoded, which Fastify parses anyway). Multipart is parsed (busboy, a few small text fields) for
 * that one address; everywhere else it stays refused with 415, as before.
 */
export function acceptOneClickMultipart(fastify: FastifyInstance): void {
  fastify.addContentTypeParser('multipart/form-data', (request, payload, done) => {
    if (request.url.split('?')[0] !== ONE_CLICK_PATH) {
      done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(String(request.headers['content-type'])), undefined);
      return;
    }
    formFields(request.headers, payload).then(
      (fields) => done(null, fields),
      () => done(new DomainError('invalid', 'MALFORMED_FORM', 'The form could not be read as multipart/form-data.'), undefined),
    );
  });
}

function formFields(headers: IncomingHttpHeaders, payload: Readable): Promise<Record<string, string>> {
  return new Promise((resolve, reject) => {
    const fields: Record<string, string> = {};
    const parser = busboy({ headers, limits: { fields: 10, fieldSize: 256, files: 0, parts: 10 } });
    parser.on('field', (name, value) => (fields[name] = value));
    parser.on('file', (_name, stream) => stream.resume());
    parser.on('close', () => resolve(fields));
    parser.on('error', reject);
    payload.on('error', reject);
    let size = 0;
    payload.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_FORM_BYTES) {
        payload.unpipe(parser);
        payload.destroy();
        reject(new Error('form too large'));
      }
    });
    payload.pipe(parser);
  });
}
