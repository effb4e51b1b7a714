import { Controller, Get, Post } from '@nestjs/common';
import { CurrentPrincipal } from '../src/auth/current-principal.decorator.js';
import type { Principal } from '../src/auth/principal.js';
import { Public, RequireScopes } from '../src/auth/public.decorator.js';
import { createUserWithToken } from './support/fixtures.js';
import { get } from './support/http.js';
import { startTestApp, TestApp } from './support/test-app.js';

/** Routes declared the way REST controllers will declare them, to test the global guard on HTTP. */
@Controller('probe')
class ProbeController {
  @Get('private')
  private(@CurrentPrincipal() principal: Principal) {
    return { user: principal.user?.username };
  }

  @Get('public')
  @Public()
  public(@CurrentPrincipal() principal: Principal | null) {
    return { user: principal?.user?.username ?? null };
  }

  @Post('write')
  @RequireScopes('api')
  write() {
    return { ok: true };
  }
}

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({}, { controllers: [ProbeController] });
});
afterAll(() => t.close());

const UNAUTHORIZED = '{"message":"401 Unauthorized"}';

describe('the global guard on HTTP routes', () => {
  it('denies anonymous callers by default, with the exact 401', async () => {
    const res = await get(t.url, '/probe/private');
    expect(res.status).toBe(401);
    expect(res.text).toBe(UNAUTHORIZED);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer scope="api offline_access", resource_metadata="${t.url}/.well-known/oauth-protected-resource"`,
    );
  });

  it('lets anonymous callers reach @Public() routes, which then see no principal', async () => {
    const res = await get(t.url, '/probe/public');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ user: null });
  });

  it('authenticates with either header and hands the principal to the handler', async () => {
    const { user, token } = await createUserWithToken(t);
    expect((await get(t.url, '/probe/private', { privateToken: token })).body).toEqual({ user: user.username });
    expect((await get(t.url, '/probe/private', { bearer: token })).body).toEqual({ user: user.username });
    expect((await get(t.url, '/probe/public', { privateToken: token })).body).toEqual({ user: user.username });
  });

  it('answers invalid credentials with 401 even on a @Public() route', async () => {
    const res = await get(t.url, '/probe/public', { privateToken: 'agora_pat_nope' });
    expect(res.status).toBe(401);
    expect(res.text).toBe(UNAUTHORIZED);
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer error="invalid_token", scope="api offline_access", resource_metadata="${t.url}/.well-known/oauth-protected-resource"`,
    );
  });

  it('answers both headers at once with 401', async () => {
    const { token } = await createUserWithToken(t);
    expect((await get(t.url, '/probe/private', { privateToken: token, bearer: token })).status).toBe(401);
  });

  it('answers a missing scope with 403 insufficient_scope', async () => {
    const { token } = await createUserWithToken(t, ['read_api']);
    const res = await fetch(`${t.url}/probe/write`, { method: 'POST', headers: { 'private-token': token } });
    expect(res.status).toBe(403);
    expect(await res.text()).toBe('{"message":"403 Forbidden","error":"insufficient_scope"}');
    expect(res.headers.get('www-authenticate')).toBe(
      `Bearer error="insufficient_scope", scope="api", resource_metadata="${t.url}/.well-known/oauth-protected-resource"`,
    );
    const ok = await createUserWithToken(t, ['api']);
    expect((await fetch(`${t.url}/probe/write`, { method: 'POST', headers: { 'private-token': ok.token } })).status).toBe(201);
  });
});
