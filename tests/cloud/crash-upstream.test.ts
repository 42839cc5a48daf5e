import { describeCrashRecovery, KILL_POINTS } from "./crash-recovery";

// The kills around upstream calls (the emulator kills the worker) and the managed connect runs.
describeCrashRecovery(KILL_POINTS.filter((point) => point.upstream || point.flow === "connect"));
