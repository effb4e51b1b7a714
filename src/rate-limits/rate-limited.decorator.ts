import { SetMetadata } from '@nestjs/common';

export const RATE_LIMITED = 'agora:rate-limited';

/**
 * How a rate-limited API route is charged (docs/operations.md, "Rate limits"):
 * - `request`: 1 point, by AuthGuard once the request is admitted (the REST API, OIDC UserInfo);
 * - `operation`: by the route itself once it knows the cost (GraphQL: the operation's cost).
 * Either way, a request AuthGuard refuses for its credentials costs 1 point of its address's budget.
 */
export type RateLimitCharge = 'request' | 'operation';

export const RateLimited = (charge: RateLimitCharge = 'request'): MethodDecorator & ClassDecorator => SetMetadata(RATE_LIMITED, charge);
