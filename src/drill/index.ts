/** The drill, a feature machine of its own room (machine.ts): the app hands it to the switch. */
export * from "./machine.js";
export * from "./model.js";
