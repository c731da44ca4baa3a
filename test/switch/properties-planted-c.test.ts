/**
 * The switch's property tests: each invariant catches its planted bug (`Plant` in world.ts), the bugs of PLANTED_C
 * (properties-shared.ts: the write-ahead's and the nonce floor's, apart so that they run on their own worker).
 */
import { PLANTED_C, plantedChecks } from "./properties-shared.js";

plantedChecks(PLANTED_C);
