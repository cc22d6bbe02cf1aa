import { createServer, type RequestListener, type Server } from "node:http";
import { closeHttp, listenHttp } from "./http-listen.js";

/** What the HTTP endpoint serves: a text exposition and its content type. */
export interface MetricsSource {
  render(): Promise<string>;
  readonly contentType: string;
}

/**
 * Serves `GET /metrics` over plain HTTP on `host:port` (port 0 picks a free one) for Prometheus to
 * scrape; every other path goes to `others` (the web console, when it shares this address) or is
 * 404. `start` resolves with the bound port.
 */
export class MetricsHttpServer {
  private readonly server: Server;

  constructor(
    private readonly source: MetricsSource,
    others?: RequestListener,
  ) {
    this.server = createServer((req, res) => {
      if (others && req.url?.split("?")[0] !== "/metrics") return others(req, res);
      if (req.method !== "GET" || req.url?.split("?")[0] !== "/metrics") {
        res.writeHead(404, { "content-type": "text/plain" }).end("not found: metrics are at GET /metrics\n");
        return;
      }
      this.source.render().then(
        (body) => res.writeHead(200, { "content-type": this.source.contentType }).end(body),
        (err: Error) => res.writeHead(500, { "content-type": "text/plain" }).end(`metrics failed: ${err.message}\n`),
      );
    });
  }

  start(host: string, port: number): Promise<number> {
    return listenHttp(this.server, host, port);
  }

  stop(): Promise<void> {
    return closeHttp(this.server);
  }
}
