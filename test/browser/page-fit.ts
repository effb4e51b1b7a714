import type { Page } from 'playwright-core';

// Whether a page fits its viewport's width: shared by the browser tests that check pages at phone width.

/**
 * Runs in the page: everything (elements and text) whose right edge passes the viewport, unless it sits in a
 * scrolling or clipping box that itself fits; what is not rendered (a closed menu) does not count. A plain string, as the test's TypeScript has no DOM types.
 */
export const OVERFLOWING = `(() => {
  const limit = window.innerWidth + 1;
  // A box that scrolls or clips its content keeps it from widening the page.
  const scrolls = (el) => /(auto|scroll|hidden|clip)/.test(getComputedStyle(el).overflowX);
  const contained = (node) => {
    for (let el = node.parentElement; el && el !== document.documentElement; el = el.parentElement) {
      if (scrolls(el) && el.getBoundingClientRect().right <= limit) return true;
    }
    return false;
  };
  const describe = (el) =>
    el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.classList.length ? '.' + [...el.classList].join('.') : '');
  const shown = (el) => el.checkVisibility({ contentVisibilityAuto: true });
  const found = [];
  for (const el of document.body.querySelectorAll('*')) {
    const box = el.getBoundingClientRect();
    if ((box.width === 0 && box.height === 0) || !shown(el)) continue;
    if (box.right > limit && !contained(el)) found.push(describe(el) + ' right=' + Math.round(box.right));
  }
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let text = walker.nextNode(); text; text = walker.nextNode()) {
    if (!text.textContent.trim() || !shown(text.parentElement)) continue;
    const range = document.createRange();
    range.selectNodeContents(text);
    const box = range.getBoundingClientRect();
    if (box.width === 0 && box.height === 0) continue;
    if (box.right > limit && !contained(text)) {
      found.push('text "' + text.textContent.trim().slice(0, 40) + '" in ' + describe(text.parentElement) + ' right=' + Math.round(box.right));
    }
  }
  return found;
})()`;

export async function expectNoHorizontalOverflow(page: Page): Promise<void> {
  expect(await page.evaluate<string[]>(OVERFLOWING)).toEqual([]);
  const { scrollWidth, innerWidth } = await page.evaluate<{ scrollWidth: number; innerWidth: number }>(
    '({ scrollWidth: document.documentElement.scrollWidth, innerWidth })',
  );
  expect(scrollWidth).toBeLessThanOrEqual(innerWidth);
}
