import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { newWebhookSecret } from './webhook-secrets.js';
import { signedHeaders } from './signed-headers.js';

const body =
  '{"type":"registration.confirmed","timestamp":"2026-11-26T12:00:00.000Z","data":{"object":"registration","id":"UmVnaXN0cmF0aW9uOjE="}}';
const id = 'msg_0b0e5f4a-6a0b-4d47-9a43-6b0e7d1c2f3a';

describe('signedHeaders', () => {
  it('carries the id, the Unix time in seconds and one v1 signature that the standardwebhooks library accepts', () => {
    const secret = newWebhookSecret();
    const now = new Date();
    const headers = signedHeaders([secret], id, now, body);
    expect(headers['webhook-id']).toBe(id);
    expect(headers['webhook-timestamp']).toBe(String(Math.floor(now.getTime() / 1000)));
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(new Webhook(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('signs with both secrets during a rotation, each accepted on its own', () => {
    const [current, previous] = [newWebhookSecret(), newWebhookSecret()];
    const headers = signedHeaders([current, previous], id, new Date(), body);
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(current).verify(body, headers)).toEqual(JSON.parse(body));
    expect(new Webhook(previous).verify(body, headers)).toEqual(JSON.parse(body));
  });

  it('matches the signature the library makes for the same message', () => {
    const secret = newWebhookSecret();
    const at = new Date('2026-11-26T12:34:56.789Z');
    expect(signedHeaders([secret], id, at, body)['webhook-signature']).toBe(new Webhook(secret).sign(id, at, body));
    expect(signedHeaders([secret], id, at, body)['webhook-timestamp']).toBe('1795696496');
  });

  it('signs the body as sent, non-ASCII text as UTF-8', () => {
    const secret = newWebhookSecret();
    const text = '{"message":"Grüße, 東京 🎉"}';
    const headers = signedHeaders([secret], id, new Date(), text);
    expect(new Webhook(secret).verify(Buffer.from(text, 'utf8'), headers)).toEqual(JSON.parse(text));
  });

  it('is refused by the library for another secret, another body or another id', () => {
    const secret = newWebhookSecret();
    const headers = signedHeaders([secret], id, new Date(), body);
    expect(() => new Webhook(newWebhookSecret()).verify(body, headers)).toThrow(WebhookVerificationError);
    expect(() => new Webhook(secret).verify(body.replace('confirmed', 'cancelled'), headers)).toThrow(WebhookVerificationError);
    expect(() => new Webhook(secret).verify(body, { ...headers, 'webhook-id': 'msg_other' })).toThrow(WebhookVerificationError);
  });
});
