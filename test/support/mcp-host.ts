import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { User } from '../../src/users/user.model.js';
import { approveInBrowser } from './oauth.js';
import type { TestApp } from './test-app.js';

/**
 * An MCP host's OAuth side, as the SDK has hosts implement it: it keeps the registration, the tokens and
 * the PKCE verifier, and sends the user to the browser, here sign-in and consent driven through the pages
 * by a browser-like client; each authorization URL and the last redirect to the host's loopback address
 * (RFC 8252: a port of its own choice, nobody listening) are kept for the test.
 */
export class McpHostOAuthProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier?: string;
  authorizations: URL[] = [];
  callback?: URL;
  readonly redirectUrl = `http://127.0.0.1:${49152 + Math.floor(Math.random() * 16000)}/callback`;

  constructor(
    private readonly t: TestApp,
    private readonly user: User,
    private readonly registration: { clientName: string; grantTypes: string[] },
  ) {}

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: this.registration.clientName,
      redirect_uris: [this.redirectUrl],
      grant_types: this.registration.grantTypes,
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.client = information;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier!;
  }
  async redirectToAuthorization(url: URL) {
    this.authorizations.push(url);
    this.callback = new URL(await approveInBrowser(this.t, url, this.user));
  }
}
