/** The harness of the apiroutes suites: one app, and before each test a clean database with two customers and an operator. */
import { startHarness, actors, reset, superAdmin, type Harness, type Actors } from '../resources/support';
import type { Fixture } from '../../../testkit/api';

export interface Parties {
  h: Harness;
  /** The customer under test (admin, manager, agent tokens). */
  a: Actors;
  /** Another customer. */
  other: Actors;
  /** A ProjectSuperAdmin. */
  su: Fixture;
}

/** Registers the mocha hooks in the calling describe; the fields are filled before each test. */
export function useParties(env: Record<string, string> = {}): Parties {
  const p = {} as Parties;
  before(async () => {
    p.h = await startHarness(env);
  });
  after(() => p.h.close());
  beforeEach(async () => {
    await reset();
    p.a = await actors(p.h);
    p.other = await actors(p.h);
    p.su = await superAdmin(p.h);
  });
  return p;
}
