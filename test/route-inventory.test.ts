import { Body, Controller, Get, Post } from '@nestjs/common';
import { PATH_METADATA, METHOD_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants.js';
import { RequestMethod } from '@nestjs/common';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum.js';
import { DiscoveryService } from '@nestjs/core';
import { GraphQLSchemaHost } from '@nestjs/graphql';
import {
  ACCEPTS_SESSION_CREDENTIAL,
  IGNORES_CREDENTIALS,
  IS_PUBLIC,
  OWN_AUTHENTICATION,
  REQUIRED_SCOPES,
} from '../src/auth/public.decorator.js';
import { requiredScopes } from '../src/graphql/operation-policy.plugin.js';
import { PublicFieldsRegistry } from '../src/graphql/public-fields.registry.js';
import { rootFieldsOf } from '../src/graphql/root-resolvers.js';
import { view } from '../src/web/page-result.js';
import { IS_ANONYMOUS_PAGE, IS_CROSS_SITE_FORM, IS_PAGES, Pages } from '../src/web/pages.decorator.js';
import { Browser, formFields, signIn } from './support/browser.js';
import { createUser, TEST_PASSWORD } from './support/fixtures.js';
import { startTestApp, TestApp } from './support/test-app.js';

/** A page controller whose handlers declare nothing: they must fail closed. */
@Controller('probe-page')
@Pages()
class UndeclaredPageController {
  @Get()
  show() {
    return view(() => '<p>probe page</p>');
  }

  @Post()
  change(@Body() body: Record<string, unknown>) {
    return view(() => `<p>changed ${String(body.x)}</p>`);
  }

  @Get('raw')
  raw() {
    return { leaked: 'not a page' };
  }
}

/** A controller that declares nothing at all: the API's default-deny holds. */
@Controller('probe-api')
class UndeclaredApiController {
  @Get()
  show() {
    return { secret: 'data' };
  }
}

let t: TestApp;
beforeAll(async () => {
  // With METRICS_TOKEN, so that /metrics on the main listener is in the inventory too.
  t = await startTestApp(
    { METRICS_TOKEN: 'metrics-token-7Hq2xV9pLm4Rk8Zt3Wc6Yb1Nf5Jd0Ga' },
    { controllers: [UndeclaredPageController, UndeclaredApiController] },
  );
});
afterAll(() => t.close());

const has = (key: string, targets: object[]) =>
  targets.map((target) => Reflect.getMetadata(key, target) as unknown).find((v) => v !== undefined);

/** Every HTTP route with who may call it and whether forms must carry a CSRF token: reviewed as a table. */
function inventory(): string[] {
  const rows: string[] = [];
  for (const wrapper of t.get(DiscoveryService).getControllers()) {
    const type = wrapper.metatype as (new (...args: never[]) => unknown) | undefined;
    if (!type || type === UndeclaredPageController || type === UndeclaredApiController) continue;
    const base = String(Reflect.getMetadata(PATH_METADATA, type) ?? '');
    for (const name of Object.getOwnPropertyNames(type.prototype)) {
      const handler = (type.prototype as Record<string, unknown>)[name];
      if (name === 'constructor' || typeof handler !== 'function' || !Reflect.hasMetadata(PATH_METADATA, handler)) continue;
      const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as number];
      const path = `/${[base, String(Reflect.getMetadata(PATH_METADATA, handler))]
        .map((p) => p.replace(/^\/|\/$/g, ''))
        .filter(Boolean)
        .join('/')}`;
      const targets = [handler, type];
      let access: string;
      if (has(IS_PAGES, targets)) {
        const unsafe = !['GET', 'HEAD'].includes(method);
        const crossSite = has(IS_CROSS_SITE_FORM, targets) as boolean | string[] | undefined;
        const csrf = Array.isArray(crossSite)
          ? ` cross-site-form (+csrf with ${crossSite.join('|')})`
          : crossSite
            ? ' cross-site-form (no csrf)'
            : ' +csrf';
        access = `page ${has(IS_ANONYMOUS_PAGE, targets) ? 'anyone' : 'signed-in'}${unsafe ? csrf : ''}`;
        const writesResponse = Object.keys((Reflect.getMetadata(ROUTE_ARGS_METADATA, type, name) ?? {}) as object).some((key) =>
          [RouteParamtypes.RESPONSE, RouteParamtypes.NEXT].includes(Number(key.split(':')[0])),
        );
        if (writesResponse) access += ' WRITES-RESPONSE';
      } else if (has(OWN_AUTHENTICATION, targets)) access = 'api own-authentication';
      else if (has(IGNORES_CREDENTIALS, targets)) access = 'api public ignores-credentials';
      else if (has(IS_PUBLIC, targets))
        access = `api public${has(ACCEPTS_SESSION_CREDENTIAL, targets) ? ' +session-with-csrf-header' : ''}`;
      else {
        const scopes = has(REQUIRED_SCOPES, targets) as string[] | undefined;
        access = `api token${scopes ? ` scopes:${scopes.join('|')}` : ''}`;
      }
      rows.push(`${method.padEnd(6)} ${path.padEnd(48)} ${access}`);
    }
  }
  return rows.sort();
}

/**
 * Every GraphQL root field (Query, Mutation, Subscription) with who may call it, as the operation policy
 * decides (OperationPolicyPlugin): anonymous callers only on @Public() fields, tokens only with the scope
 * of the operation type, public fields included. A field no resolver binds declares nothing: UNDECLARED.
 */
function graphqlInventory(): string[] {
  const publicFields = t.get(PublicFieldsRegistry);
  return rootFieldsOf(t.get(GraphQLSchemaHost).schema)
    .map(({ type, field, resolved }) => {
      const token = `token scopes:${requiredScopes(type).join('|')}`;
      const access = !resolved ? 'UNDECLARED (no resolver)' : publicFields.isPublic(type, field) ? `public, or ${token}` : token;
      return `${type.padEnd(12)} ${field.padEnd(36)} ${access}`;
    })
    .sort();
}

describe('route inventory', () => {
  it('lists every route with its authentication and CSRF declaration (a change here is a change in who may call what)', () => {
    expect(inventory()).toMatchSnapshot();
  });

  it('has no page handler that writes the response itself', () => {
    expect(inventory().filter((row) => row.includes('WRITES-RESPONSE'))).toEqual([]);
  });

  it('lists every GraphQL root field with its access declaration (a change here is a change in who may call what)', () => {
    expect(graphqlInventory()).toMatchSnapshot();
  });

  it('has a declaration for every GraphQL root field: a resolver, public or behind a scope', () => {
    const rows = graphqlInventory();
    expect(rows.length).toBe(rootFieldsOf(t.get(GraphQLSchemaHost).schema).length);
    expect(rows.filter((row) => row.includes('UNDECLARED'))).toEqual([]);
  });
});

describe('a page handler without any declaration', () => {
  it('sends an anonymous visitor to sign in, and refuses an anonymous form post', async () => {
    const get = await new Browser(t.url).get('/probe-page');
    expect(get.status).toBe(303);
    expect(get.headers.get('location')).toBe('/sign-in?return_to=%2Fprobe-page');
    const post = await new Browser(t.url).post('/probe-page', { x: '1' });
    expect(post.status).toBe(303);
    expect(post.headers.get('location')).toBe('/sign-in');
  });

  it('refuses a signed-in form post without a valid CSRF token, and accepts one with it', async () => {
    const browser = new Browser(t.url);
    await browser.follow(await signIn(browser, (await createUser(t)).username, TEST_PASSWORD));
    expect((await browser.post('/probe-page', { x: '1' })).status).toBe(403);
    expect((await browser.post('/probe-page', { x: '1', _csrf: 'forged' })).status).toBe(403);
    const { _csrf } = formFields(await (await browser.get('/account')).text());
    const ok = await browser.post('/probe-page', { x: '1', _csrf: _csrf! });
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe('<p>changed 1</p>');
  });

  it('never sends what a handler returns when it is not a page, and logs it', async () => {
    const browser = new Browser(t.url);
    await browser.follow(await signIn(browser, (await createUser(t)).username, TEST_PASSWORD));
    const res = await browser.get('/probe-page/raw');
    expect(res.status).toBe(500);
    const body = await res.text();
    expect(body).not.toContain('leaked');
    expect(body).toContain('Something went wrong');
    expect(t.logs.some((line) => String(line.msg) === 'Page failed')).toBe(true);
  });

  it('is denied by the API guard when the controller is not declared a page either', async () => {
    const res = await fetch(`${t.url}/probe-api`);
    expect(res.status).toBe(401);
    expect(await res.text()).not.toContain('secret');
  });
});
