import { deltaChannelHistoryTests, validate } from '@langchain/langgraph-checkpoint-validation';
import { validationInitializer } from './fixtures/validation-initializer.js';

// The official conformance suite, including the opt-in delta-channel tests, on PGlite.
const initializer = validationInitializer('pglite', 'PostgresCheckpointer on PGlite');
validate(initializer);
deltaChannelHistoryTests(initializer);
