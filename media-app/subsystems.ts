/**
 * The subsystems every media-app node runs, started in this order and stopped in reverse.
 * One line each; the module that defines a subsystem exports it as `subsystem`.
 */
import type { Subsystem } from './subsystem';

export const SUBSYSTEMS: readonly Subsystem[] = [
];
