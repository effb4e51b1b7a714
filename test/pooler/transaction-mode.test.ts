import { describePooledPair } from './pooled-pair.js';

// PgBouncer in transaction mode (what most managed PostgreSQL offerings hand out), with
// DATABASE_POOLING=transaction and DATABASE_DIRECT_URL to the server itself (docs/deploy.md).
describePooledPair('transaction');
