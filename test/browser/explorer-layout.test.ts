import { resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { createUser, TEST_PASSWORD } from '../support/fixtures.js';
import { ROOT } from '../support/processes.js';
import { freePort, startTestApp, TestApp } from '../support/test-app.js';
import { launchChromium } from './chromium.js';

const SHOTS = resolve(ROOT, 'docs/screenshots');

let t: TestApp;
let browser: Browser;
let signedInState: Awaited<ReturnType<Awaited<ReturnType<Browser['newContext']>>['storageState']>>;

beforeAll(async () => {
  const port = await freePort();
  t = await startTestApp({ BASE_URL: `http://localhost:${port}`, PORT: String(port) }, { port });
  browser = await launchChromium();
  const user = await createUser(t, { name: 'Dorothy Vaughan' });
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${t.config.baseUrl}/sign-in`);
  await page.fill('#login', user.username);
  await page.fill('#password', TEST_PASSWORD);
  await page.click('button[type=submit]');
  await page.waitForURL(`${t.config.baseUrl}/`);
  signedInState = await context.storageState();
  await context.close();
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** Opens the explorer and runs the starter query with GraphiQL's button; the answer is on screen somewhere. */
async function runStarterQuery(page: Page): Promise<void> {
  await page.goto(`${t.config.baseUrl}/explorer`);
  await page.waitForSelector('.graphiql-query-editor .CodeMirror');
  await page.click('.graphiql-execute-button');
  await page.locator('.result-window').filter({ hasText: '"name": "Dorothy Vaughan"' }).waitFor();
}

type Box = { x: number; y: number; width: number; height: number };
async function box(page: Page, selector: string): Promise<Box> {
  const found = await page.locator(selector).first().boundingBox();
  if (!found) throw new Error(`${selector} is not rendered`);
  return found;
}

describe('the API explorer', () => {
  it('on a 390 px phone, puts the result under the query, inside the screen, with no sideways scroll', async () => {
    const context = await browser.newContext({
      viewport: { width: 390, height: 844 },
      storageState: signedInState,
      hasTouch: true,
      isMobile: true,
    });
    try {
      const page = await context.newPage();
      await runStarterQuery(page);
      const query = await box(page, '.graphiql-query-editor');
      const result = await box(page, '.graphiql-response');
      // Both panes as wide as the screen allows (not squeezed side by side), the result below the query.
      for (const pane of [query, result]) {
        expect(pane.x).toBeGreaterThanOrEqual(0);
        expect(pane.x + pane.width).toBeLessThanOrEqual(390);
        expect(pane.width).toBeGreaterThan(250);
        expect(pane.height).toBeGreaterThan(200);
      }
      expect(result.y).toBeGreaterThanOrEqual(query.y + query.height - 1);
      expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      // Reached by scrolling down, as any page is.
      await page.locator('.graphiql-response').scrollIntoViewIfNeeded();
      await page.screenshot({ path: `${SHOTS}/explorer-result-390.png`, fullPage: true });
    } finally {
      await context.close();
    }
  });

  it('on a desktop, fills the window below the navigation', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, storageState: signedInState });
    try {
      const page = await context.newPage();
      await runStarterQuery(page);
      const explorer = await box(page, '.graphiql-container');
      expect(explorer.y + explorer.height).toBeGreaterThan(900 - 40);
      expect(explorer.y + explorer.height).toBeLessThanOrEqual(900);
      expect(explorer.height).toBeGreaterThan(600);
      // Query and result side by side, as GraphiQL lays them out.
      const query = await box(page, '.graphiql-query-editor');
      const result = await box(page, '.graphiql-response');
      expect(result.x).toBeGreaterThan(query.x + query.width / 2);
      expect(await page.evaluate('document.documentElement.scrollHeight')).toBeLessThanOrEqual(900);
      await page.screenshot({ path: `${SHOTS}/explorer-result-1280.png` });
    } finally {
      await context.close();
    }
  });
});
