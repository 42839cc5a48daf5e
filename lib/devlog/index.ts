export { ERROR_PATTERNS, ERROR_PATTERN_SOURCE, isSuccessLine, type ErrorPattern } from "./patterns";
export { createLogScanner, DEFAULT_GROUP_DELAY_MS, type LogScanner, type LogScannerOptions, type LogScannerStats } from "./scanner";
export { classifyError, createErrorReporter, type ErrorReporter, type ErrorReporterOptions } from "./reporter";
