import { describePooledPair } from './pooled-pair.js';

// PgBouncer in session mode: each client connection a server session of its own; Agora's defaults
// (DATABASE_POOLING unset, no DATABASE_DIRECT_URL).
describePooledPair('session');
