// Loaded into a coordinator with `node --import tsx --import ./bench/anatomy/record-coordinator-marks.ts`
// by the bench's anatomy: records the coordinator's wire marks and writes them, as JSON lines, to
// the file named by BENCH_ANATOMY_MARKS when the process exits. Without that variable it does nothing.
import { writeFileSync } from "node:fs";
import { MarkRecorder } from "./mark-recorder.js";
import { formatMarks } from "./marks.js";

const file = process.env.BENCH_ANATOMY_MARKS;
if (file) {
  const recorder = new MarkRecorder("coordinator");
  process.once("exit", () => writeFileSync(file, formatMarks(recorder.marks())));
}
