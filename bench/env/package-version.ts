import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const NODE_MODULES = fileURLToPath(new URL("../../node_modules/", import.meta.url));

/** The installed version of an npm package, read from node_modules ("?" when it is not installed). */
export function packageVersion(name: string): string {
  try {
    return JSON.parse(readFileSync(`${NODE_MODULES}${name}/package.json`, "utf8")).version;
  } catch {
    return "?";
  }
}
