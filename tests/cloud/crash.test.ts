import { describeCrashRecovery, KILL_POINTS } from "./crash-recovery";

// The enable runs the worker kills itself in, at every journal point (the other kill points are
// in crash-upstream.test.ts).
describeCrashRecovery(KILL_POINTS.filter((point) => !point.upstream && point.flow !== "connect"));
