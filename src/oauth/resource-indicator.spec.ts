import { checkResourceIndicator } from './resource-indicator.js';

const API = 'https://agora.example';

describe('checkResourceIndicator (RFC 8707)', () => {
  it.each([undefined, API, `${API}/`, `${API}/graphql`, `${API}/api/v4/events`])('accepts %s', (resource) => {
    expect(() => checkResourceIndicator(resource, API)).not.toThrow();
  });

  it.each([
    'https://other.example',
    'http://agora.example',
    'https://agora.example:8443',
    `${API}#x`,
    `${API}/graphql?x=1`,
    'not a uri',
    '',
  ])('refuses %s with invalid_target', (resource) => {
    expect(() => checkResourceIndicator(resource, API)).toThrow(expect.objectContaining({ code: 'invalid_target' }));
  });

  it('keeps to the path of an identifier that has one', () => {
    expect(() => checkResourceIndicator('https://host.example/agora/graphql', 'https://host.example/agora')).not.toThrow();
    expect(() => checkResourceIndicator('https://host.example/agoraX', 'https://host.example/agora')).toThrow();
    expect(() => checkResourceIndicator('https://host.example/', 'https://host.example/agora')).toThrow();
  });
});
