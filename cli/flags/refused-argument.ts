// The request fields a coordinator names when it refuses a value, and the `turnstile lock` flag or
// argument each came from. The CLI checks the default limits itself; this covers a coordinator
// started with other ones (serve --min-ttl, --max-wait, --max-name-bytes).
const FIELD_FLAGS: Record<string, string> = {
  "open.ttl": "--ttl",
  "acquire.wait": "--wait",
  "acquire.name": "NAME",
};

/**
 * A coordinator's INVALID_ARGUMENT message ("open.ttl: 100 ms is outside …") with the request field
 * replaced by the flag it came from, or undefined when the field is not one the user gave.
 */
export function refusedArgument(message: string): string | undefined {
  const match = /(?:^|\s)([a-z_]+\.[a-z_]+): (.*)$/.exec(message);
  const flag = match && FIELD_FLAGS[match[1]];
  return flag ? `${flag}: ${match[2]}` : undefined;
}
