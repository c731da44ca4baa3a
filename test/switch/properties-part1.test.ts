/**
 * The switch's property tests, seeded part 1 of 4: invariants 1-8, I-IV and IX after every step of 2,000 random
 * event sequences from seed 20261127 (properties-shared.ts says what is checked and how to replay a seed).
 */
import { seededPart } from "./properties-shared.js";

seededPart(1);
