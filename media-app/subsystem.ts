/**
 * A subsystem of a media-app node (conferences, queues, media streams, speech, AI...): started once
 * the call factory exists, it fills its member of the flow services, registers handlers for its own
 * commands, and stops before the node's calls are hung up. The list lives in subsystems.ts.
 */
import type { Logger } from 'pino';
import type { Command } from '../core/commands/protocol';
import type { CallFactory } from './call/factory';
import type { CallDeps } from './call/deps';
import type { FlowServices } from './flow/services';

/** The commands media-app/commands.ts runs itself; every other command is a subsystem's. */
export type BuiltInCommandType = 'call.originate' | 'call.hangup' | 'call.mute' | 'call.recording_start' | 'call.recording_stop' | 'activeflow.start' | 'activeflow.stop' | 'activeflow.continue';
export type SubsystemCommand = Exclude<Command, { type: BuiltInCommandType }>;
export type CommandType = SubsystemCommand['type'];
export type CommandOf<T extends CommandType> = Extract<SubsystemCommand, { type: T }>;

export interface CommandRegistry {
  /** Handles commands of this type from the node's queues (delivery is at least once: be idempotent). */
  on<T extends CommandType>(type: T, handler: (command: CommandOf<T>) => Promise<void>): void;
}

export interface SubsystemContext {
  readonly deps: CallDeps;
  readonly factory: CallFactory;
  /** The node's flow services: set your member here. */
  readonly services: FlowServices;
  readonly commands: CommandRegistry;
  readonly nodeId: string;
  readonly logger: Logger;
}

export interface RunningSubsystem {
  stop(): Promise<void>;
}

export interface Subsystem {
  readonly name: string;
  start(ctx: SubsystemContext): Promise<RunningSubsystem>;
}
