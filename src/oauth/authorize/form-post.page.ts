import { createHash } from 'node:crypto';
import { html, SafeHtml } from '../../web/html.js';
import type { ViewOptions } from '../../web/page-result.js';
import { formActionSource } from './authorization-request.js';

/** The one script of the form_post page: it submits the form at once. Allowed by its hash alone. */
const SUBMIT_SCRIPT = 'document.forms[0].submit();';
const SUBMIT_SCRIPT_HASH = `'sha256-${createHash('sha256').update(SUBMIT_SCRIPT).digest('base64')}'`;
/** Built outside the page's template, which formatting may re-indent: the hash covers these exact bytes. */
const SUBMIT_ELEMENT = new SafeHtml(`<script>${SUBMIT_SCRIPT}</script>`);

/**
 * OAuth 2.0 Form Post Response Mode: the authorization response as hidden fields of a form the browser
 * posts to the redirect URI at once (a button for a browser without scripts). The page is the response
 * and nothing else: its CSP lets it run only the submitting script (by its hash) and post only to the
 * redirect URI's origin.
 */
export function formPostPage(redirectUri: string, fields: Record<string, string>): string {
  return html`<!doctype html>
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>Returning to the application · Agora</title>
      </head>
      <body>
        ${responseForm(redirectUri, fields, html`<noscript><button type="submit">Continue to the application</button></noscript>`)}
        ${SUBMIT_ELEMENT}
      </body>
    </html>`.value;
}

/** The response's fields as a form posting to the redirect URI, with whatever submits it. */
export function responseForm(redirectUri: string, fields: Record<string, string>, submit: SafeHtml): SafeHtml {
  return html`<form method="post" action="${redirectUri}">
    ${Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}" />`)} ${submit}
  </form>`;
}

/** The form_post page's CSP additions: its script by hash, its form to the client's origin. */
export function formPostViewOptions(redirectUri: string): ViewOptions {
  return { csp: { scriptSrc: [SUBMIT_SCRIPT_HASH] }, formActions: [formActionSource(redirectUri)] };
}
