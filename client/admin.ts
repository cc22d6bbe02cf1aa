// The client's second in-repo entry, for the admin CLI (cli/): the pieces it shares with the
// library beyond the public API of client/index.ts. Not in package.json's exports map, so not
// public; the CLI imports the client only through index.ts and this file.
export { type CredentialOptions, channelCredentials } from "./connection/channel-credentials.js";
export { withTransportHint } from "./connection/transport-hint.js";
export { WatchStream } from "./election/watch-stream.js";
export { readableDetails } from "./session/status-error.js";
