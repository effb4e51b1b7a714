import { Body, Controller, Get, HttpCode, Post, Query, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { DomainError } from '../errors/domain-error.js';
import { Public } from '../auth/public.decorator.js';
import { UsersService } from '../users/users.service.js';
import { formText } from '../web/form-values.js';
import { html } from '../web/html.js';
import { page } from '../web/layout.js';
import type { PageResult } from '../web/page-result.js';
import { view } from '../web/page-result.js';
import { AnonymousPage, Pages } from '../web/pages.decorator.js';
import { UnsubscribeLinks } from './unsubscribe-links.js';

/**
 * The unsubscribe link of a reminder, opened in a browser: a page that asks (link checkers and mail
 * scanners open links, and must not unsubscribe anyone), whose button does it. Anyone holding the link
 * may use it, signed in or not, as with GitHub's.
 */
@Controller('mail/unsubscribe')
@Pages()
@AnonymousPage()
export class UnsubscribePageController {
  constructor(
    private readonly links: UnsubscribeLinks,
    private readonly users: UsersService,
  ) {}

  @Get()
  async ask(@Query('token') token: unknown): Promise<PageResult> {
    const user = await this.userOf(token);
    if (!user) return view(() => invalidLinkPage(), { status: 400 });
    return view((c) =>
      page({
        title: 'Unsubscribe',
        narrow: true,
        body: html`<h1>Stop reminders?</h1>
          <p>
            ${user.email} will no longer get a reminder the day before events. Mail about your own registrations (confirmations, changes,
            cancellations) still comes.
          </p>
          <form method="post" action="/mail/unsubscribe/confirm">
            <input type="hidden" name="_csrf" value="${c.csrfToken}" />
            <input type="hidden" name="token" value="${String(token)}" />
            <div class="actions"><button type="submit">Unsubscribe</button></div>
          </form>`,
      }),
    );
  }

  @Post('confirm')
  async confirm(@Body() body: Record<string, unknown>): Promise<PageResult> {
    const user = await this.userOf(formText(body.token));
    if (!user) return view(() => invalidLinkPage(), { status: 400 });
    await this.users.setMailReminders(user.id, false);
    return view(() =>
      page({
        title: 'Unsubscribed',
        narrow: true,
        body: html`<h1>Unsubscribed</h1>
          <p>${user.email} gets no more reminders. You can turn them on again on <a href="/account#mail">your account page</a>.</p>`,
      }),
    );
  }

  private async userOf(token: unknown) {
    const id = typeof token === 'string' ? this.links.userOf(token) : null;
    const user = id ? await this.users.findById(id) : null;
    return user?.state === 'active' ? user : null;
  }
}

function invalidLinkPage(): string {
  return page({
    title: 'Link not valid',
    narrow: true,
    body: html`<h1>This link is not valid</h1>
      <p>Copy the whole link from the e-mail, or change which mail you get on <a href="/account#mail">your account page</a>.</p>`,
  });
}

/**
 * One-click unsubscribe (RFC 8058): the mail app posts `List-Unsubscribe=One-Click` to the address in
 * the mail's `List-Unsubscribe` header, with no cookie and no page. The signed token in the address
 * is what authorizes it; doing it twice changes nothing.
 */
@Controller('mail/unsubscribe')
@Public()
export class OneClickUnsubscribeController {
  constructor(
    private readonly links: UnsubscribeLinks,
    private readonly users: UsersService,
  ) {}

  @Post()
  @HttpCode(200)
  async oneClick(
    @Query('token') token: unknown,
    @Body() body: unknown,
    @Res({ passthrough: true }) reply: FastifyReply,
  ): Promise<{ message: string }> {
    const form = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
    if (form['List-Unsubscribe'] !== 'One-Click') {
      throw new UnsubscribeError(
        'ONE_CLICK_EXPECTED',
        'Send the form field List-Unsubscribe=One-Click (RFC 8058), or open the address in a browser.',
      );
    }
    const id = typeof token === 'string' ? this.links.userOf(token) : null;
    const user = id ? await this.users.findById(id) : null;
    if (!user)
      throw new UnsubscribeError(
        'INVALID_UNSUBSCRIBE_LINK',
        'This unsubscribe address is not valid: copy the whole address from the e-mail.',
      );
    await this.users.setMailReminders(user.id, false);
    void reply.header('cache-control', 'no-store');
    return { message: 'Unsubscribed: no more reminders.' };
  }
}

/** A one-click request that cannot unsubscribe anyone: 422 with its code (the generic JSON error shape). */
class UnsubscribeError extends DomainError {
  constructor(code: 'ONE_CLICK_EXPECTED' | 'INVALID_UNSUBSCRIBE_LINK', message: string) {
    super('invalid', code, message);
  }
}
