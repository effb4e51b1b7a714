import { Foundation1763800000000 } from './1763800000000-foundation.js';
import { CredentialChangeNotifications1763800000001 } from './1763800000001-credential-change-notifications.js';
import { OAuth1763800000002 } from './1763800000002-oauth.js';
import { SignInFailures1763800000003 } from './1763800000003-sign-in-failures.js';
import { Events1763900000000 } from './1763900000000-events.js';
import { LegacyApiUsage1763900000001 } from './1763900000001-legacy-api-usage.js';
import { SignUpThrottle1763900000002 } from './1763900000002-sign-up-throttle.js';
import { ClientChangeNotifications1763900000003 } from './1763900000003-client-change-notifications.js';
import { SignUpProbeThrottle1763900000004 } from './1763900000004-sign-up-probe-throttle.js';
import { SessionDevices1764000000001 } from './1764000000001-session-devices.js';
import { HousekeepingRuns1795424666792 } from './1795424666792-housekeeping-runs.js';
import { PublicClients1796000000001 } from './1796000000001-public-clients.js';
import { RefreshTokens1796000000002 } from './1796000000002-refresh-tokens.js';
import { DeviceAuthorizations1796000000003 } from './1796000000003-device-authorizations.js';
import { ApplicationIdIndexes1796000000004 } from './1796000000004-application-id-indexes.js';
import { RegistrationQuotas1796100000000 } from './1796100000000-registration-quotas.js';
import { JobQueue1796200000002 } from './1796200000002-job-queue.js';
import { MailPreferences1796200000003 } from './1796200000003-mail-preferences.js';
import { AccountSecurity1796300000000 } from './1796300000000-account-security.js';
import { AccountLinks1796300000001 } from './1796300000001-account-links.js';
import { PendingSignIns1796300000002 } from './1796300000002-pending-sign-ins.js';
import { WebAuthnChallenges1796300000003 } from './1796300000003-webauthn-challenges.js';
import { SignInMethodsAndOrganizerSecondFactor1796300000004 } from './1796300000004-sign-in-methods-and-organizer-second-factor.js';
import { KnownBrowsers1796300000005 } from './1796300000005-known-browsers.js';
import { Webhooks1796400000000 } from './1796400000000-webhooks.js';
import { WebhookDeliveryQueuedAt1796400000002 } from './1796400000002-webhook-delivery-queued-at.js';
import { CountedAttempts1796400000003 } from './1796400000003-counted-attempts.js';
import { SigningAlgorithmsAndJwtAccessTokens1796500000100 } from './1796500000100-signing-algorithms-and-jwt-access-tokens.js';
import { ClientKeysAndSecrets1796500000300 } from './1796500000300-client-keys-and-secrets.js';
import { ApplicationProfile1796500000500 } from './1796500000500-application-profile.js';
import { ResourceServers1796600000100 } from './1796600000100-resource-servers.js';
import { RegistrationCancelledBy1796200000001 } from './1796200000001-registration-cancelled-by.js';
import { ServiceAccounts1796500000200 } from './1796500000200-service-accounts.js';
import { BackchannelLogout1796500000400 } from './1796500000400-backchannel-logout.js';
import { PairwiseSubjects1796500000401 } from './1796500000401-pairwise-subjects.js';
import { OidcSessionOfGrants1796600000200 } from './1796600000200-oidc-session-of-grants.js';
import { DeviceAuthorizationResources1796700000100 } from './1796700000100-device-authorization-resources.js';
import { SignInThrottleSubjects1796700000200 } from './1796700000200-sign-in-throttle-subjects.js';
import { GrantResourceServers1796700000300 } from './1796700000300-grant-resource-servers.js';

/** Every migration, oldest first. `npm run migration:generate` appends new ones here. */
export const MIGRATIONS = [
  Foundation1763800000000,
  CredentialChangeNotifications1763800000001,
  OAuth1763800000002,
  SignInFailures1763800000003,
  Events1763900000000,
  LegacyApiUsage1763900000001,
  SignUpThrottle1763900000002,
  ClientChangeNotifications1763900000003,
  SignUpProbeThrottle1763900000004,
  SessionDevices1764000000001,
  HousekeepingRuns1795424666792,
  PublicClients1796000000001,
  RefreshTokens1796000000002,
  DeviceAuthorizations1796000000003,
  ApplicationIdIndexes1796000000004,
  RegistrationQuotas1796100000000,
  RegistrationCancelledBy1796200000001,
  JobQueue1796200000002,
  MailPreferences1796200000003,
  AccountSecurity1796300000000,
  AccountLinks1796300000001,
  PendingSignIns1796300000002,
  WebAuthnChallenges1796300000003,
  SignInMethodsAndOrganizerSecondFactor1796300000004,
  KnownBrowsers1796300000005,
  Webhooks1796400000000,
  WebhookDeliveryQueuedAt1796400000002,
  CountedAttempts1796400000003,
  SigningAlgorithmsAndJwtAccessTokens1796500000100,
  ServiceAccounts1796500000200,
  ClientKeysAndSecrets1796500000300,
  BackchannelLogout1796500000400,
  PairwiseSubjects1796500000401,
  ApplicationProfile1796500000500,
  ResourceServers1796600000100,
  OidcSessionOfGrants1796600000200,
  DeviceAuthorizationResources1796700000100,
  SignInThrottleSubjects1796700000200,
  GrantResourceServers1796700000300,
];
