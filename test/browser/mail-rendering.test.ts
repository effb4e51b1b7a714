import { resolve } from 'node:path';
import type { Browser } from 'playwright-core';
import { renderMail } from '../../src/mail/messages/render-mail.js';
import { renderSecurityMail } from '../../src/mail/messages/security-mail.js';
import type { RenderedMail } from '../../src/mail/outgoing-mail.js';
import { SAMPLE_MAILS } from '../support/mail-samples.js';
import { SAMPLE_SECURITY_MAILS } from '../support/security-mail-samples.js';
import { ROOT } from '../support/processes.js';
import { launchChromium } from './chromium.js';

// Every mail's HTML part at a phone's width and a laptop's, as a mail app shows it (inline images from
// their attachments): nothing may scroll sideways. Screenshots: docs/screenshots/mail-<kind>-<width>.png.

const SHOTS = resolve(ROOT, 'docs/screenshots');
const WIDTHS = [
  { width: 390, height: 844 },
  { width: 1280, height: 800 },
];

/** What passes the right edge of the viewport: elements and text. A plain string: the test has no DOM types. */
const OVERFLOWING = `(() => {
  const limit = window.innerWidth + 1;
  const found = [];
  for (const el of document.body.querySelectorAll('*')) {
    if (!el.checkVisibility()) continue;
    const box = el.getBoundingClientRect();
    if (box.width > 0 && box.right > limit) found.push(el.tagName.toLowerCase() + ' right=' + Math.round(box.right));
  }
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let text = walker.nextNode(); text; text = walker.nextNode()) {
    if (!text.textContent.trim() || !text.parentElement.checkVisibility()) continue;
    const range = document.createRange();
    range.selectNodeContents(text);
    const box = range.getBoundingClientRect();
    if (box.width > 0 && box.right > limit) found.push('text "' + text.textContent.trim().slice(0, 40) + '" right=' + Math.round(box.right));
  }
  found.push(...(document.documentElement.scrollWidth > window.innerWidth ? ['page scrollWidth=' + document.documentElement.scrollWidth] : []));
  return found;
})()`;

/** The HTML with `cid:` images replaced by their attachments, as a mail app shows them. */
function withInlineImages(mail: RenderedMail): string {
  let page = mail.html;
  for (const attachment of mail.attachments ?? []) {
    if (!attachment.cid) continue;
    const data = `data:${attachment.contentType};base64,${Buffer.from(attachment.content).toString('base64')}`;
    page = page.split(`cid:${attachment.cid}`).join(data);
  }
  return page;
}

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

/** Shows the mail as a mail app would: nothing remote, images loaded, nothing past the right edge; then the screenshot. */
async function checkAndShoot(mail: RenderedMail, name: string, viewport: { width: number; height: number }): Promise<void> {
  const page = await browser.newPage({ viewport });
  try {
    // No request may leave the page: a mail loads nothing remote.
    const requests: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith('data:')) requests.push(request.url());
    });
    await page.setContent(withInlineImages(mail), { waitUntil: 'load' });
    expect(requests).toEqual([]);
    const images = await page.evaluate<{ alt: string; loaded: boolean }[]>(
      '[...document.images].map((img) => ({ alt: img.alt, loaded: img.complete && img.naturalWidth > 0 }))',
    );
    for (const image of images) expect(image).toEqual({ alt: expect.stringMatching(/\S/), loaded: true });
    expect(await page.evaluate<string[]>(OVERFLOWING)).toEqual([]);
    await page.screenshot({ path: `${SHOTS}/mail-${name}-${viewport.width}.png`, fullPage: true });
  } finally {
    await page.close();
  }
}

describe.each(SAMPLE_MAILS.map((message) => [message.kind, message] as const))('the %s mail', (kind, message) => {
  it.each(WIDTHS)('fits $width px without scrolling sideways, its images loaded', async (viewport) => {
    await checkAndShoot(await renderMail(message), kind, viewport);
  });
});

describe.each(SAMPLE_SECURITY_MAILS.map(({ name, mail }) => [name, mail] as const))('the %s security notice', (name, mail) => {
  it.each(WIDTHS)('fits $width px without scrolling sideways', async (viewport) => {
    await checkAndShoot(renderSecurityMail(mail), `security.${name}`, viewport);
  });
});
