// The switch rig of the esl tests: testkit/esl/switch-rig.ts (the fsmrf backend and conference suites share it).
export { startSwitchRig, startFsmrfRig, useFsmrfRig, type SwitchRig, type FsmrfRig, type RigCall, type FsmrfFixture } from '../../testkit/esl/switch-rig';
