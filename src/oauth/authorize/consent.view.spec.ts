import { createHash } from 'node:crypto';
import { ApplicationEntity } from '../clients/application.entity.js';
import type { AuthorizationRequest } from './authorization-request.js';
import { toConsentView } from './consent.view.js';
import { consentPage } from './authorize.pages.js';

const SECRET_HASH = createHash('sha256').update('agora_cs_the-client-secret').digest('hex');

function applicationEntity(): ApplicationEntity {
  return Object.assign(new ApplicationEntity(), {
    id: '7b0c7a3e-4d0e-4f4e-9a57-3f1b2c9d8e01',
    ownerId: '1d9f0a52-6c1b-4e0e-8f9a-2b7c4d5e6f70',
    name: 'Ticket Scanner',
    clientId: 'agora_ci_scanner',
    clientSecretHash: SECRET_HASH,
    redirectUris: ['https://scanner.example/callback'],
    scopes: ['openid', 'profile', 'api'],
    createdAt: new Date('2026-01-01T00:00:00Z'),
    updatedAt: new Date('2026-01-01T00:00:00Z'),
    secretRotatedAt: null,
  });
}

const request: AuthorizationRequest = {
  application: applicationEntity(),
  redirectUri: 'https://scanner.example/callback',
  scopes: ['openid', 'api'],
  codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  state: 'xyz',
  prompt: new Set(),
  responseMode: 'query',
  resources: [],
  resourceServers: [],
};

/** Every value reachable from `value`, with the path to it. */
function* walk(value: unknown, path = 'view'): Generator<[string, unknown]> {
  yield [path, value];
  if (value === null || typeof value !== 'object') return;
  for (const [key, item] of Object.entries(value)) yield* walk(item, `${path}.${key}`);
}

describe('the consent view', () => {
  it('carries what the page shows and posts back, built from the request', () => {
    expect(toConsentView(request)).toEqual({
      applicationName: 'Ticket Scanner',
      selfRegistered: false,
      profile: { description: null, homepage: null, logo: null, owner: null },
      scopes: ['openid', 'api'],
      resources: [],
      resourceServers: [],
      destination: 'scanner.example',
      parameters: {
        response_type: 'code',
        client_id: 'agora_ci_scanner',
        redirect_uri: 'https://scanner.example/callback',
        scope: 'openid api',
        code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
        code_challenge_method: 'S256',
        state: 'xyz',
        nonce: undefined,
      },
    });
  });

  it('never receives the application entity or its client-secret hash', () => {
    for (const [path, value] of walk(toConsentView(request))) {
      expect({ path, entity: value instanceof ApplicationEntity }).toEqual({ path, entity: false });
      expect({ path, secret: /secret/i.test(path) }).toEqual({ path, secret: false });
      if (typeof value === 'string') expect({ path, value }).not.toEqual({ path, value: expect.stringContaining(SECRET_HASH) });
    }
  });

  it('renders a page without the client-secret hash', () => {
    const page = consentPage({ consent: toConsentView(request), user: { username: 'ada', name: 'Ada' }, csrfToken: 'csrf' });
    expect(page).toContain('Ticket Scanner');
    expect(page).not.toContain(SECRET_HASH);
    expect(page).not.toContain('Not verified by Agora');
  });

  it('marks an application that registered itself and nobody claimed, naming where it sends the user', () => {
    const unclaimed = { ...request, application: Object.assign(applicationEntity(), { ownerId: null }) };
    expect(toConsentView(unclaimed).selfRegistered).toBe(true);
    const page = consentPage({ consent: toConsentView(unclaimed), user: { username: 'ada', name: 'Ada' }, csrfToken: 'csrf' });
    expect(page).toContain('Not verified by Agora');
    expect(page).toContain('Continue only if you trust <strong>scanner.example</strong>');
  });
});
