import { deltaChannelHistoryTests, validate } from '@langchain/langgraph-checkpoint-validation';
import { validationInitializer } from './fixtures/validation-initializer.js';

// The suite's values are small, so by default they are stored whole. Here every JSON list,
// however small, goes through element storage (sequences, element rows, write manifests),
// so the official suite checks that path round-trips exactly too.
const initializer = validationInitializer(
  'pglite',
  'PostgresCheckpointer storing every list by element',
  {
    listStorage: { minBytes: 0, minElementBytes: 0 },
  },
);
validate(initializer);
deltaChannelHistoryTests(initializer);
