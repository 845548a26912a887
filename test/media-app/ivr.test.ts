// The IVR end to end on the embedded engine (the suite: ivr-suite.ts).
import { ivrSuite } from './ivr-suite';

ivrSuite('embedded', '+8991000007');
