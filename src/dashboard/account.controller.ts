import { Body, Controller, Get, Param, Post } from '@nestjs/common';
import { DomainError } from '../errors/domain-error.js';
import { PersonalTokensService } from '../personal-tokens/personal-tokens.service.js';
import type { SignedInUser } from '../web/page-sessions.js';
import { UsersService } from '../users/users.service.js';
import { SecondFactors } from '../users/second-factors.js';
import { fieldErrors, formList, formText } from '../web/form-values.js';
import type { PageContext, PageResult } from '../web/page-result.js';
import { seeOther, view } from '../web/page-result.js';
import { Pages, SignedIn } from '../web/pages.decorator.js';
import { AccountPageOptions, accountPage, confirmRevokePage } from './account.pages.js';

/** The account page: profile (display name) and personal access tokens (create, shown once; revoke with confirmation). */
@Controller('account')
@Pages()
export class AccountController {
  constructor(
    private readonly tokens: PersonalTokensService,
    private readonly users: UsersService,
    private readonly secondFactors: SecondFactors,
  ) {}

  @Get()
  show(@SignedIn() signedIn: SignedInUser): Promise<PageResult> {
    return this.accountView(signedIn, {});
  }

  @Post('profile')
  async updateProfile(@SignedIn() signedIn: SignedInUser, @Body() body: Record<string, unknown>): Promise<PageResult> {
    const name = formText(body.name);
    try {
      await this.users.updateProfile(signedIn.user.id, { name });
      return seeOther('/account', { path: '/account', notice: 'Profile saved.' });
    } catch (err) {
      if (!(err instanceof DomainError) || err.kind !== 'invalid') throw err;
      return this.accountView(signedIn, { profile: { name, error: fieldErrors(err).name } }, 422);
    }
  }

  @Post('mail')
  async updateMail(@SignedIn() signedIn: SignedInUser, @Body() body: Record<string, unknown>): Promise<PageResult> {
    const reminders = formText(body.reminders) === 'on';
    await this.users.setMailReminders(signedIn.user.id, reminders);
    return seeOther('/account', {
      path: '/account',
      notice: reminders ? 'E-mail settings saved: you get reminders.' : 'E-mail settings saved: no more reminders.',
    });
  }

  @Post('tokens')
  async create(@SignedIn() signedIn: SignedInUser, @Body() body: Record<string, unknown>): Promise<PageResult> {
    const name = formText(body.name);
    const scopes = formList(body.scopes);
    const expires = formText(body.expires_at) || undefined;
    try {
      const expiresAt = expires ? new Date(`${expires}T23:59:59.999Z`) : null;
      const { token, personalToken } = await this.tokens.create(signedIn.user.id, { name, scopes, expiresAt });
      return seeOther('/account', { path: '/account', secret: { label: personalToken.name, value: token } });
    } catch (err) {
      if (!(err instanceof DomainError) || err.kind !== 'invalid') throw err;
      return this.accountView(signedIn, { errors: fieldErrors(err), values: { name, scopes, expiresAt: expires } }, 422);
    }
  }

  @Get('tokens/:id/revoke')
  async confirmRevoke(@SignedIn() signedIn: SignedInUser, @Param('id') id: string): Promise<PageResult> {
    const token = await this.tokens.getActive(id, signedIn.user.id);
    return view((c) => confirmRevokePage({ signedIn, csrfToken: c.csrfToken, token }));
  }

  @Post('tokens/:id/revoke')
  async revoke(@SignedIn() signedIn: SignedInUser, @Param('id') id: string): Promise<PageResult> {
    const token = await this.tokens.revoke(id, signedIn.user.id);
    return seeOther('/account', { path: '/account', notice: `Token “${token.name}” revoked. Requests using it now fail.` });
  }

  private async accountView(signedIn: SignedInUser, extra: Partial<AccountPageOptions>, status = 200): Promise<PageResult> {
    const tokens = await this.tokens.listForUser(signedIn.user.id);
    const activeTokens = await this.tokens.countActive(signedIn.user.id);
    const maxTokens = this.tokens.maxActive;
    const mailReminders = (await this.users.findById(signedIn.user.id))?.mailReminders ?? true;
    const secondFactorRequired = await this.secondFactors.requiredOf(signedIn.user.id);
    return view(
      (c: PageContext) =>
        accountPage({
          signedIn,
          csrfToken: c.csrfToken,
          tokens,
          activeTokens,
          maxTokens,
          mailReminders,
          secondFactorRequired,
          ...flashOptions(c),
          ...extra,
        }),
      { status },
    );
  }
}

function flashOptions(c: PageContext): Partial<AccountPageOptions> {
  return {
    notice: c.flash?.notice,
    created: c.flash?.secret ? { name: c.flash.secret.label, token: c.flash.secret.value } : undefined,
  };
}
