// The request fields a coordinator names when it refuses a value, and the `turnstile lock` flag or
// argument each came from (a set's members by "[]" for their index). The CLI leaves the limits a
// coordinator may change (serve --min-ttl, --max-ttl, --max-wait, --max-name-bytes) to it.
const FIELD_FLAGS: Record<string, string> = {
  "open.ttl": "--ttl",
  "acquire.wait": "--wait",
  "acquire.name": "NAME",
  "acquire_all.wait": "--wait",
  "acquire_all.locks[].name": "NAME",
};

/**
 * A coordinator's INVALID_ARGUMENT message ("open.ttl: 100 ms is outside …") with the request field
 * replaced by the flag it came from, or undefined when the field is not one the user gave.
 */
export function refusedArgument(message: string): string | undefined {
  const match = /(?:^|\s)([a-z_]+(?:\.[a-z_]+(?:\[\d+\])?)+): (.*)$/.exec(message);
  const flag = match && FIELD_FLAGS[match[1].replace(/\[\d+\]/, "[]")];
  return flag ? `${flag}: ${match[2]}` : undefined;
}
