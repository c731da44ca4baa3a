/**
 * The switch's property tests: each invariant catches its planted bug (`Plant` in world.ts), the bugs of PLANTED_A
 * (properties-shared.ts; the list is split in three files so that they run on separate workers).
 */
import { PLANTED_A, plantedChecks } from "./properties-shared.js";

plantedChecks(PLANTED_A);
