import { once } from "node:events";
import { connect, createServer, type Server, type Socket } from "node:net";
import { expect } from "chai";
import { PartitionNetwork } from "./partition-network.js";
import { PartitionProxy } from "./partition-proxy.js";

/** Collects what a socket receives; `received(n)` resolves once n bytes have come. */
function reader(socket: Socket) {
  let text = "";
  const waiting: { n: number; resolve: () => void }[] = [];
  socket.on("data", (chunk) => {
    text += chunk.toString();
    for (const w of waiting.splice(0))
      if (text.length >= w.n) w.resolve();
      else waiting.push(w);
  });
  return {
    text: () => text,
    received: (n: number) =>
      new Promise<void>((resolve) => (text.length >= n ? resolve() : waiting.push({ n, resolve }))),
  };
}

describe("PartitionProxy", () => {
  let echo: Server;
  let proxy: PartitionProxy;
  const sockets: Socket[] = [];

  before(async () => {
    echo = createServer((s) => s.pipe(s));
    echo.listen(0, "127.0.0.1");
    await once(echo, "listening");
    const port = (echo.address() as { port: number }).port;
    proxy = await PartitionProxy.start(`127.0.0.1:${port}`);
  });

  after(async () => {
    for (const s of sockets) s.destroy();
    await proxy.stop();
    echo.close();
  });

  async function open(): Promise<Socket> {
    const socket = connect(proxy.port, "127.0.0.1");
    sockets.push(socket);
    await once(socket, "connect");
    return socket;
  }

  it("holds every byte of a cut process's connection until restore, then delivers them in order", async () => {
    const socket = await open();
    const got = reader(socket);
    socket.write("a");
    await got.received(1);
    const cut = await proxy.cut(new Set([process.pid]));
    socket.write("b");
    socket.write("c");
    // A cut of another process changes nothing for this one.
    const other = await proxy.cut(new Set([process.pid + 1_000_000]));
    // Nothing comes back while cut; 200 ms is many loopback round trips.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(got.text()).to.equal("a");
    cut.restore();
    other.restore();
    await got.received(3);
    expect(got.text()).to.equal("abc");
  });

  it("cuts one direction only: bytes toward the target pass, answers wait", async () => {
    const socket = await open();
    const got = reader(socket);
    const cut = await proxy.cut("all", "from-target");
    socket.write("xyz");
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(got.text()).to.equal("");
    cut.restore();
    await got.received(3);
    expect(got.text()).to.equal("xyz");
  });

  it("lets a connection opened during a cut reach the target only on restore", async () => {
    const cut = await proxy.cut(new Set([process.pid]));
    const socket = await open();
    const got = reader(socket);
    socket.write("late");
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(got.text()).to.equal("");
    cut.restore();
    await got.received(4);
    expect(got.text()).to.equal("late");
  });

  it("does not cut the connections of other processes", async () => {
    const cut = await proxy.cut(new Set([process.pid + 1_000_000]));
    try {
      const socket = await open();
      const got = reader(socket);
      socket.write("free");
      await got.received(4);
      expect(got.text()).to.equal("free");
    } finally {
      cut.restore();
    }
  });

  it("runs in a PartitionNetwork's own process, cut there by this process's id", async () => {
    const network = await PartitionNetwork.start();
    try {
      const remote = await network.proxy(`127.0.0.1:${(echo.address() as { port: number }).port}`);
      const socket = connect(remote.port, "127.0.0.1");
      sockets.push(socket);
      await once(socket, "connect");
      const got = reader(socket);
      const cut = await remote.cut([process.pid]);
      socket.write("net");
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(got.text()).to.equal("");
      await cut.restore();
      await got.received(3);
      expect(got.text()).to.equal("net");
    } finally {
      await network.stop();
    }
  });
});
