import { MemoryStore } from "../../../server/store/memory/memory-store.js";
import { storeConformance } from "./store-conformance.js";

storeConformance("memory", (options) => new MemoryStore(options), {
  singleStore: "the embedded store serves one coordinator; two instances never share locks",
});
