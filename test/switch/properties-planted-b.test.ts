/**
 * The switch's property tests: each invariant catches its planted bug (`Plant` in world.ts), the bugs of PLANTED_B
 * (properties-shared.ts; the list is split in three files so that they run on separate workers).
 */
import { PLANTED_B, plantedChecks } from "./properties-shared.js";

plantedChecks(PLANTED_B);
