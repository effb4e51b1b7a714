import { AttendeeEntity } from '../events/attendee.entity.js';
import { EventEntity } from '../events/event.entity.js';
import { OrganizerMemberEntity } from '../events/organizer-member.entity.js';
import { OrganizerEntity } from '../events/organizer.entity.js';
import { RegistrationEntity } from '../events/registration.entity.js';
import { TicketTypeEntity } from '../events/ticket-type.entity.js';
import { HousekeepingRunEntity } from '../housekeeping/housekeeping-run.entity.js';
import { LegacyApiUsageEntity } from '../legacy-api/legacy-api-usage.entity.js';
import { AccessTokenEntity } from '../oauth/access-token.entity.js';
import { ApplicationEntity } from '../oauth/application.entity.js';
import { AuthorizationCodeEntity } from '../oauth/authorization-code.entity.js';
import { DeviceAuthorizationEntity } from '../oauth/device-authorization.entity.js';
import { GrantEntity } from '../oauth/grant.entity.js';
import { SigningKeyEntity } from '../oauth/signing-key.entity.js';
import { PersonalTokenEntity } from '../personal-tokens/personal-token.entity.js';
import { KnownBrowserEntity } from '../sessions/known-browser.entity.js';
import { SessionEntity } from '../sessions/session.entity.js';
import { SignInFailureEntity } from '../sessions/sign-in-failure.entity.js';
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
  SignInFailureEntity,
  ApplicationEntity,
  AccessTokenEntity,
  AuthorizationCodeEntity,
  DeviceAuthorizationEntity,
  GrantEntity,
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
