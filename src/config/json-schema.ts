/**
 * The JSON schema for editors (config/schema.json, `hl-deadman config schema`): z.toJSONSchema(ConfigSchema) for
 * the input side. Each key's description and default come from its row of the table (./options.ts); durations
 * accept "15s"-style strings too; documentation keys (`//key`, `$schema`) are allowed.
 */
import { z } from "zod";
import { ConfigSchema, OPTIONS } from "./options.js";
import { isPlainObject } from "./values.js";

const DURATION_KEYS = new Set(OPTIONS.filter((s) => s.kind === "duration").map((s) => s.key));
const DEFAULT_OF = new Map(OPTIONS.filter((o) => o.default !== undefined).map((o) => [o.key, o.default]));

export function configJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(ConfigSchema, { io: "input" }) as Record<string, unknown>;
  const annotate = (props: Record<string, Record<string, unknown>>, prefix: string) => {
    for (const [k, found] of Object.entries(props)) {
      const key = prefix + k;
      // The description last, where editors' hovers and the committed file have long had it.
      const { description, ...rest } = found;
      // zod leaves out the default of a transformed type (a list of addresses); the table has it.
      if (rest.default === undefined && DEFAULT_OF.has(key)) rest.default = DEFAULT_OF.get(key);
      const prop: Record<string, unknown> = description === undefined ? rest : { ...rest, description };
      props[k] = prop;
      if (DURATION_KEYS.has(key)) {
        const { type: _type, minimum: _min, maximum: _max, ...rest } = prop;
        props[k] = {
          ...rest,
          anyOf: [
            { type: "integer", minimum: 0, description: "milliseconds" },
            {
              type: "string",
              pattern: "^\\d+(\\.\\d+)?(ms|s|m|h|d)?$",
              description: "e.g. 500ms, 15s, 2m, 1h",
            },
          ],
        };
      }
      if (isPlainObject(prop.properties)) {
        annotate(prop.properties as Record<string, Record<string, unknown>>, `${key}.`);
        prop.patternProperties = { "^(//|\\$)": {} };
      }
    }
  };
  annotate(schema.properties as Record<string, Record<string, unknown>>, "");
  // Documentation keys are allowed in the file ("//interval": "...", "$comment", "$schema").
  schema.patternProperties = { "^(//|\\$)": {} };
  schema.title = "hl-deadman configuration";
  return schema;
}
