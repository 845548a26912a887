// The esl tests' raw client and server: testkit/esl/client.ts (the switch rig there uses them too).
export { PASSWORD, plainHeaders, RawClient, startServer, type ServerFrame } from '../../testkit/esl/client';
