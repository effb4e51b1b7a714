import { html, SafeHtml } from '../../web/html.js';
import type { MailTexts } from '../texts.en.js';
import type { MailBody, MailLink } from './mail-body.js';

// Mail apps ignore <style> blocks and external CSS more often than not: one table layout, 600 px at
// most and fluid below, every style inline, system fonts, no remote image. Every value goes through
// `html`, which escapes it.

const FONT = `-apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif`;
const INK = '#1f2430';
const MUTED = '#5f6b7a';
const LINE = '#dfe3ea';
const BRAND = '#4338ca';
const WRAP = 'overflow-wrap:anywhere;word-break:break-word;';

/** Only http(s) addresses become links; anything else stays text. */
export function linkable(url: string): boolean {
  return /^https?:\/\//i.test(url);
}

function link(target: MailLink, style = `color:${BRAND};`): SafeHtml {
  return linkable(target.url) ? html`<a href="${target.url}" style="${style}${WRAP}">${target.label}</a>` : html`${target.label}`;
}

export function renderHtml(body: MailBody, t: MailTexts): string {
  const p = (text: string) => html`<p style="margin:0 0 16px;">${text}</p>`;
  const page = html`<!doctype html>
    <html lang="${t.language}">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="color-scheme" content="light" />
        <meta name="supported-color-schemes" content="light" />
        <title>${body.subject}</title>
      </head>
      <body style="margin:0;padding:0;background:#f5f7fb;-webkit-text-size-adjust:100%;">
        <div style="display:none;max-height:0;overflow:hidden;opacity:0;color:transparent;">${body.preheader}</div>
        <table role="presentation" width="100%" cellpadding="0" cellspacing="0" border="0" style="background:#f5f7fb;">
          <tr>
            <td align="center" style="padding:24px 8px;">
              <table
                role="presentation"
                width="600"
                cellpadding="0"
                cellspacing="0"
                border="0"
                style="width:100%;max-width:600px;background:#ffffff;border:1px solid ${LINE};border-radius:10px;"
              >
                <tr>
                  <td
                    style="padding:16px 24px;border-bottom:1px solid ${LINE};font-family:${FONT};font-size:18px;font-weight:bold;color:${BRAND};"
                  >
                    ${t.brand}
                  </td>
                </tr>
                <tr>
                  <td style="padding:24px;font-family:${FONT};font-size:16px;line-height:1.5;color:${INK};${WRAP}">
                    <h1 style="margin:0 0 16px;font-size:22px;line-height:1.3;color:${INK};">${body.heading}</h1>
                    ${p(body.greeting)} ${body.paragraphs.map(p)} ${body.changes.length > 0 ? changes(body) : ''} ${details(body)}
                    ${body.notes.map(p)} ${body.tickets.length > 0 ? tickets(body, t) : ''} ${button(body.action)}
                    ${body.links.map((l) => html`<p style="margin:0 0 8px;">${link(l)}</p>`)}
                  </td>
                </tr>
                <tr>
                  <td
                    style="padding:16px 24px;border-top:1px solid ${LINE};font-family:${FONT};font-size:13px;line-height:1.5;color:${MUTED};${WRAP}"
                  >
                    <p style="margin:0;">${body.footer}</p>
                    ${body.unsubscribe ? html`<p style="margin:8px 0 0;">${link(body.unsubscribe, `color:${MUTED};`)}</p>` : ''}
                  </td>
                </tr>
              </table>
            </td>
          </tr>
        </table>
      </body>
    </html> `;
  return page.value;
}

function details(body: MailBody): SafeHtml {
  return html`<table
    role="presentation"
    width="100%"
    cellpadding="0"
    cellspacing="0"
    border="0"
    style="margin:0 0 16px;border-top:1px solid ${LINE};"
  >
    ${body.details.map(
      (d) =>
        html`<tr>
          <td
            valign="top"
            style="width:30%;padding:8px 12px 8px 0;border-bottom:1px solid ${LINE};font-family:${FONT};font-size:14px;color:${MUTED};"
          >
            ${d.label}
          </td>
          <td valign="top" style="padding:8px 0;border-bottom:1px solid ${LINE};font-family:${FONT};font-size:15px;color:${INK};${WRAP}">
            ${d.href ? link({ label: d.value, url: d.href }) : d.value}
          </td>
        </tr>`,
    )}
  </table>`;
}

function changes(body: MailBody): SafeHtml {
  return html`<table
    role="presentation"
    width="100%"
    cellpadding="0"
    cellspacing="0"
    border="0"
    style="margin:0 0 16px;background:#fffaeb;border:1px solid #fedf89;border-radius:8px;"
  >
    ${body.changes.map(
      (c) =>
        html`<tr>
          <td style="padding:12px 16px;font-family:${FONT};font-size:15px;color:${INK};${WRAP}">
            <div style="font-weight:bold;margin:0 0 4px;">${c.label}</div>
            <div style="color:${MUTED};text-decoration:line-through;">${c.before}</div>
            <div style="font-weight:bold;color:#93370d;">${c.after}</div>
          </td>
        </tr>`,
    )}
  </table>`;
}

function tickets(body: MailBody, t: MailTexts): SafeHtml {
  return html`<h2 style="margin:24px 0 8px;font-size:18px;line-height:1.3;color:${INK};">${t.tickets.heading}</h2>
    <p style="margin:0 0 16px;">${t.tickets.intro}</p>
    ${body.tickets.map(
      (ticket) =>
        html`<table
          role="presentation"
          width="100%"
          cellpadding="0"
          cellspacing="0"
          border="0"
          style="margin:0 0 16px;border:1px solid ${LINE};border-radius:8px;"
        >
          <tr>
            <td align="center" style="padding:16px;font-family:${FONT};color:${INK};${WRAP}">
              <img
                src="cid:${ticket.cid}"
                width="220"
                height="220"
                alt="${ticket.alt}"
                style="display:block;width:220px;max-width:100%;height:auto;border:0;margin:0 auto 8px;"
              />
              <div style="font-size:16px;font-weight:bold;">${ticket.name}</div>
              <div style="font-family:ui-monospace, Menlo, Consolas, monospace;font-size:15px;letter-spacing:1px;color:${MUTED};">
                ${ticket.caption}
              </div>
            </td>
          </tr>
        </table>`,
    )}`;
}

function button(action: MailLink | undefined): SafeHtml {
  if (!action || !linkable(action.url)) return html``;
  return html`<table role="presentation" cellpadding="0" cellspacing="0" border="0" style="margin:8px 0 16px;">
    <tr>
      <td style="border-radius:6px;background:${BRAND};">
        <a
          href="${action.url}"
          style="display:inline-block;padding:12px 20px;font-family:${FONT};font-size:16px;font-weight:bold;color:#ffffff;text-decoration:none;border-radius:6px;"
          >${action.label}</a
        >
      </td>
    </tr>
  </table>`;
}
