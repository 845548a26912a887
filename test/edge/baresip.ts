// The softphone driver lives in testkit/ (scripts/fsmrf/e2e.ts uses it too); the tests import it from here as before.
export * from '../../testkit/baresip';
