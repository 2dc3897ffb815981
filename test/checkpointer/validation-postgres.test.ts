import { deltaChannelHistoryTests, validate } from '@langchain/langgraph-checkpoint-validation';
import { describe, it } from 'vitest';
import { postgresUrl } from '../support/databases.js';
import { validationInitializer } from './fixtures/validation-initializer.js';

// The official conformance suite, including the opt-in delta-channel tests, on PostgreSQL.
if (postgresUrl) {
  const initializer = validationInitializer('postgres', 'PostgresCheckpointer on PostgreSQL');
  validate(initializer);
  deltaChannelHistoryTests(initializer);
} else if (process.env.CI === 'true' || process.env.CI === '1') {
  describe('PostgresCheckpointer on PostgreSQL', () => {
    it('runs the official validation suite (DATABASE_URL must be set in CI)', () => {
      throw new Error('DATABASE_URL is not set: CI must validate the checkpointer on PostgreSQL.');
    });
  });
} else {
  describe.skip('PostgresCheckpointer on PostgreSQL — skipped: set DATABASE_URL to run', () => {
    it('needs DATABASE_URL', () => undefined);
  });
}
