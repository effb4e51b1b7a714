import { AttendeeEntity } from '../events/attendee.entity.js';
import { EventEntity } from '../events/event.entity.js';
import { OrganizerMemberEntity } from '../events/organizer-member.entity.js';
import { OrganizerEntity } from '../events/organizer.entity.js';
import { RegistrationEntity } from '../events/registration.entity.js';
import { TicketTypeEntity } from '../events/ticket-type.entity.js';
import { HousekeepingRunEntity } from '../housekeeping/housekeeping-run.entity.js';
import { LegacyApiUsageEntity } from '../legacy-api/legacy-api-usage.entity.js';
import { AccessTokenEntity } from '../oauth/tokens/access-token.entity.js';
import { ResourceServerEntity } from '../oauth/resources/resource-server.entity.js';
import { RefreshTokenEntity } from '../oauth/tokens/refresh-token.entity.js';
import { ApplicationEntity } from '../oauth/clients/application.entity.js';
import { ClientAssertionEntity } from '../oauth/clients/client-assertion.entity.js';
import { AuthorizationCodeEntity } from '../oauth/authorize/authorization-code.entity.js';
import { DeviceAuthorizationEntity } from '../oauth/device/device-authorization.entity.js';
import { GrantEntity } from '../oauth/consent/grant.entity.js';
import { SessionClientEntity } from '../oauth/logout/backchannel/session-client.entity.js';
import { SigningKeyEntity } from '../oauth/keys/signing-key.entity.js';
import { PersonalTokenEntity } from '../personal-tokens/personal-token.entity.js';
import { KnownBrowserEntity } from '../sessions/known-browser.entity.js';
import { SessionEntity } from '../sessions/session.entity.js';
import { CountedAttemptEntity } from '../sessions/counted-attempt.entity.js';
import { UserEntity } from '../users/user.entity.js';
import { RecoveryCodeEntity } from '../two-factor/recovery-code.entity.js';
import { PasskeyEntity } from '../passkeys/passkey.entity.js';
import { PendingSignInEntity } from '../sessions/pending-sign-in.entity.js';
import { WebAuthnChallengeEntity } from '../passkeys/webauthn-challenge.entity.js';
import { AccountLinkEntity } from '../account-links/account-link.entity.js';
import { WebhookAttemptEntity } from '../webhooks/webhook-attempt.entity.js';
import { WebhookDeliveryEntity } from '../webhooks/webhook-delivery.entity.js';
import { WebhookEndpointEntity } from '../webhooks/webhook-endpoint.entity.js';
import { WebhookMessageEntity } from '../webhooks/webhook-message.entity.js';

/** Every TypeORM entity of the service. A new module adds its entities here. */
export const ENTITIES = [
  UserEntity,
  PersonalTokenEntity,
  SessionEntity,
  CountedAttemptEntity,
  ApplicationEntity,
  ClientAssertionEntity,
  AccessTokenEntity,
  ResourceServerEntity,
  RefreshTokenEntity,
  AuthorizationCodeEntity,
  DeviceAuthorizationEntity,
  GrantEntity,
  SessionClientEntity,
  SigningKeyEntity,
  OrganizerEntity,
  OrganizerMemberEntity,
  EventEntity,
  TicketTypeEntity,
  RegistrationEntity,
  AttendeeEntity,
  LegacyApiUsageEntity,
  HousekeepingRunEntity,
  RecoveryCodeEntity,
  PasskeyEntity,
  KnownBrowserEntity,
  PendingSignInEntity,
  WebAuthnChallengeEntity,
  AccountLinkEntity,
  WebhookEndpointEntity,
  WebhookMessageEntity,
  WebhookDeliveryEntity,
  WebhookAttemptEntity,
];
