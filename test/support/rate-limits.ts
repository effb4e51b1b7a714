/**
 * Rate limits on, with budgets no other test reaches: every API response carries the headers, and only
 * the rate-limit tests, which set their own, see a 429.
 */
export const TEST_RATE_LIMITS: Record<string, string> = {
  RATE_LIMIT_POINTS: '100000000',
  RATE_LIMIT_ANONYMOUS_POINTS: '100000000',
  RATE_LIMIT_OAUTH_TOKEN_REQUESTS: '100000000',
  RATE_LIMIT_OAUTH_REGISTRATIONS: '100000000',
};
