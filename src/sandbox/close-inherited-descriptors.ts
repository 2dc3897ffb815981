// Imported first by an IsolatedProcessSandbox child's bundle, for its side effect: inherited
// descriptors are closed before the tool module's top-level code runs (see descriptor-hygiene.ts).
import { closeInheritedDescriptors } from './descriptor-hygiene.js';

closeInheritedDescriptors();
