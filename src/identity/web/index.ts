export {
  type DecisionKind,
  type DecisionStatement,
  type SignedDecision,
  signDecisionWeb,
  type WebDecisionInput,
} from './sign-decision-web.js';
