/**
 * The subsystems every media-app node runs, started in this order and stopped in reverse.
 * One line each; the module that defines a subsystem exports it as `subsystem`.
 */
import type { Subsystem } from './subsystem';
import { subsystem as ai } from './ai';
import { subsystem as speech } from './speech';
import { subsystem as mediaStreams } from './streams/subsystem';
import { subsystem as conference } from './conference';
import { subsystem as queue } from './queue';
import { subsystem as workspace } from './workspace/subsystem';
import { subsystem as xfer } from './transfer';
import { subsystem as storage } from './storage';
import { subsystem as billing } from './billing';
import { subsystem as callControls } from './call/controls-subsystem';
import { subsystem as flowSimulator } from './flow/simulator/subsystem';
import { subsystem as presence } from './presence';
import { subsystem as voicemail } from './voicemail';
import { subsystem as pbx } from './pbx';
import { subsystem as twiml } from './twiml/service';

export const SUBSYSTEMS: readonly Subsystem[] = [ai, speech, mediaStreams, conference, queue, workspace, xfer, storage, billing, callControls, flowSimulator, presence, voicemail, pbx, twiml];
