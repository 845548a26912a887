// The fsmrf backend's suite against our switch: testkit/esl/fsmrf-suite.ts (shared with test/conference).
export { useFsmrfSuite, type FsmrfSuite } from '../../../testkit/esl/fsmrf-suite';
