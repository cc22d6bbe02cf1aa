import { expect } from "chai";
import type { LockImpl } from "../../bench/impls/lock-impl.js";
import { implColor } from "../../bench/report/plots.js";

const impl = (id: string) => ({ id }) as LockImpl;

describe("implColor()", () => {
  it("keeps an implementation's color when --only selects fewer implementations", () => {
    const all = ["turnstile", "turnstile-embedded", "spin", "redis-semaphore", "redlock", "etcd"].map(impl);
    const some = [impl("spin"), impl("turnstile-embedded")];
    for (const id of ["spin", "turnstile-embedded"]) expect(implColor(id, some)).to.deep.equal(implColor(id, all));
  });

  it("gives the two Turnstile rows and every other implementation distinct colors", () => {
    const ids = ["turnstile", "turnstile-embedded", "spin", "redis-semaphore", "redlock", "etcd"];
    const colors = new Set(ids.map((id) => implColor(id, ids.map(impl)).join(",")));
    expect(colors.size).to.equal(ids.length);
  });
});
